// The operators' console in a real browser (Debian's Chromium, headless, driven by playwright-core):
// the destinations board and the last hour's charts, against the service as a child process in
// live mode, the emulator as its sorter (small destinations that fill in seconds and stay full)
// and a WCS client answering. Samples every second (ChartSampleSeconds 1), so the charts have
// points within seconds; what a sample holds does not depend on its interval.
// Screenshots at 1280x800 (and of the charts there) and at a tablet's 800x1280 go to
// test-artifacts/screenshots/ (.ci/run lists them at its end).
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, noChromium } from '../helpers/chromium';
import { runWcsClient } from '../../examples/wcs-client';
import { type EmulatorProcess, startEmulator } from '../helpers/emulator';
import { call } from '../helpers/http';
import { removeHome, tempHome } from '../helpers/home';
import { type ServiceProcess, startServiceProcess } from '../helpers/process';
import { until } from '../helpers/until';
import { describeWhen } from '../helpers/tools';

jest.setTimeout(120_000);
const KEY = 'console-e2e-key';
const SCREENSHOTS = path.resolve(__dirname, '../../test-artifacts/screenshots');

describeWhen(noChromium, "the operators' console in headless Chromium")("the operators' console in headless Chromium", () => {
  let home: string;
  let emu: EmulatorProcess;
  let svc: ServiceProcess;
  let browser: Browser;
  let client: ReturnType<typeof runWcsClient>;
  let page: Page;
  const problems: string[] = [];
  const headers = { 'x-api-key': KEY };

  beforeAll(async () => {
    // Destinations of 6 items each, emptied only after a minute: some fill (the sorter's SCAN turns their lamp red, flashing) and stay full.
    emu = await startEmulator([
      '--port',
      '0',
      '--rate',
      '15',
      '--seed',
      '5',
      '--duration',
      '110',
      '--capacity',
      '6',
      '--empty-after-ms',
      '60000',
    ]);
    home = tempHome({
      'config.json': {
        TestMode: false,
        Port: 0,
        Host: '127.0.0.1',
        ApiKeys: [KEY],
        ChartSampleSeconds: 1,
        Sorter: { Host: '127.0.0.1', Port: emu.port },
      },
    });
    svc = await startServiceProcess(home);
    client = runWcsClient({ base: svc.base, apiKey: KEY, loops: 1, timeOut: 1 });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
    page.on('response', (r) => r.status() >= 400 && problems.push(`HTTP ${r.status()}: ${r.url()}`));
    await page.goto(`${svc.base}/dashboard`);
    await page.fill('#key', KEY);
    await page.click('#key-form button');
  });
  afterAll(async () => {
    await browser.close();
    await client.stop();
    await emu.stop();
    await svc.stop();
    removeHome(home);
  });

  const tile = (destination: string) => page.locator(`#board .tile[data-destination="${destination}"]`);
  const tileText = async (destination: string) =>
    (await tile(destination).count()) ? ((await tile(destination).textContent()) ?? '') : '';
  const number = async (id: string) => Number((await page.locator(`#${id}`).textContent())?.replace(/[^\d.]/g, '') || NaN);

  it('shows every destination the sorter reported, one tile each, with counts per status, and a filter', async () => {
    // The emulator reports its 20 destinations when the link comes up.
    await until(async () => (await page.locator('#board .tile').count()) === 20, 20_000, 'a tile for each of the 20 destinations', 200);
    const counts = (await page.locator('#board-counts').textContent())!;
    const ready = Number(/Ready (\d+)/.exec(counts)![1]);
    const notReady = Number(/Not ready (\d+)/.exec(counts)![1]);
    expect(ready + notReady).toBe(20);
    expect(counts).toContain('of 20 destinations');
    expect(await tileText('D001')).toMatch(/D001(Ready|Not ready)lamp .*changed .* by the sorter/);

    await page.selectOption('#board-filter', 'Ready');
    expect(await page.locator('#board .tile').count()).toBe(await page.locator('#board .tile[data-status="Ready"]').count());
    await page.selectOption('#board-filter', 'all');
    await page.fill('#board-search', 'D01');
    await until(async () => (await page.locator('#board .tile').count()) === 10, 5_000, 'D010 to D019 only');
    await page.fill('#board-search', '');
  });

  it('shows the lamp a POST /destination sets, changed by the WCS, and the sorter confirming it', async () => {
    // A destination that is Ready now (a full one would stay NotReady whatever the WCS says).
    const ready = (await page.locator('#board .tile[data-status="Ready"]').first().getAttribute('data-destination'))!;
    expect(await tileText(ready)).not.toContain('lamp blue, solid');
    const res = await call(
      svc.base,
      'POST',
      '/destination',
      {
        Destination: ready,
        DestinationStatus: 'Ready',
        DestinationText: 'LANE 5',
        LightStatus: 'Solid',
        LightColor: 'BLUE',
        BatchDoorStatus: 'CLOSED',
      },
      headers,
    );
    expect(res.status).toBe(200);
    await until(async () => (await tileText(ready)).includes('lamp blue, solid'), 10_000, 'the board shows the lamp the WCS set', 200);
    const t = await tileText(ready);
    expect(t).toContain('“LANE 5”');
    expect(t).toMatch(/by the WCS \(127\.0\.0\.1\)/);
    expect(await tile(ready).locator('.lamp').getAttribute('class')).toContain('lamp-blue');
    // The emulator applies the setting and reports it in a SCAN: the tile says it agrees.
    await until(
      async () => (await tile(ready).getAttribute('data-agreement')) === 'Agrees',
      10_000,
      "the sorter's SCAN confirms the setting",
      200,
    );
    // What the page shows is the table an operator reads with sqlite3.
    const row = (await call(svc.base, 'GET', '/dashboard/data', undefined, headers)).json.Board.find(
      (b: { Destination: string }) => b.Destination === ready,
    );
    expect(row).toMatchObject({ DestinationText: 'LANE 5', Wcs: { LightStatus: 'Solid', LightColor: 'BLUE', Agreement: 'Agrees' } });
  });

  it("shows a lamp the sorter's SCAN changes (a destination full), and marks a tile whose SCAN disagrees with the WCS", async () => {
    // A destination of 6 items fills within seconds: the emulator's SCAN sets it NotReady, red, flashing.
    let full = '';
    await until(
      async () => {
        const tiles = await page.locator('#board .tile[data-status="NotReady"]').all();
        for (const t of tiles)
          if (((await t.textContent()) ?? '').match(/lamp red, flashing.*by the sorter/))
            full = (await t.getAttribute('data-destination'))!;
        return full !== '';
      },
      40_000,
      'a destination reported full by the sorter, its lamp red and flashing',
      250,
    );
    expect(await tile(full).locator('.lamp').getAttribute('class')).toMatch(/lamp-red.*lamp-flashing/);
    expect(await tileText(full)).toContain('Not ready');

    // The WCS sets it Ready; the sorter keeps a full destination NotReady: its SCAN disagrees.
    expect(
      (
        await call(
          svc.base,
          'POST',
          '/destination',
          { Destination: full, DestinationStatus: 'Ready', DestinationText: '', LightStatus: 'Solid', LightColor: 'GREEN' },
          headers,
        )
      ).status,
    ).toBe(200);
    await until(async () => (await tile(full).getAttribute('class'))!.includes('disagrees'), 10_000, 'the tile marked as disagreeing', 200);
    expect(await tileText(full)).toContain("differs from the WCS's setting (Ready, lamp green, solid");
    expect(await page.locator('#board-counts').textContent()).toMatch(/disagreeing [1-9]/);
    await page.selectOption('#board-filter', 'disagrees');
    expect(await page.locator('#board .tile').count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator('#board .tile:not(.disagrees)').count()).toBe(0);
    await page.selectOption('#board-filter', 'all');
  });

  it('draws the last hour: every chart has points after traffic, and the rates are steady and not zero', async () => {
    await until(
      async () => Number(await page.locator('#chart-rates').getAttribute('data-points')) >= 5,
      20_000,
      'five samples in the rates chart',
      250,
    );
    for (const id of ['chart-rates', 'chart-decisions', 'chart-queues', 'chart-link']) {
      expect(Number(await page.locator(`#${id}`).getAttribute('data-points'))).toBeGreaterThanOrEqual(5);
      expect(await page.locator(`#${id} canvas`).count()).toBe(1);
    }
    const samples = (await call(svc.base, 'GET', '/dashboard/data', undefined, headers)).json.LastHour.Samples;
    const last = samples[samples.length - 1];
    expect(last.Items).toBeGreaterThan(0);
    expect(last.LinkUp).toBe(1);
    expect(samples.some((x: { Decisions: number; DecisionP99Ms: number | null }) => x.Decisions > 0 && x.DecisionP99Ms !== null)).toBe(
      true,
    );
    // The flaw seen before: "in from the sorter" read 0.0 while messages went out to the WCS.
    expect(await number('rate-in-sortation')).toBeGreaterThan(0);
    expect(await number('rate-out-sortation')).toBeGreaterThan(0);
    expect(await page.locator('#rates-window').textContent()).toMatch(/over the last \d+ s|over the last minute/);
    // A REQUEST's induct location is in the induct column, not under destination.
    await until(async () => (await page.locator('#deliveries tr').count()) > 0, 10_000, 'deliveries');
    for (const row of await page.locator('#deliveries tr').all()) {
      const cells = await row.locator('td').allTextContents();
      if (cells[2] === 'REQUEST') expect([cells[4]!.startsWith('IND'), cells[5]]).toEqual([true, '']);
      // A VERIFY's destination is where the item went: a chute, or REJECT when its assignment came late.
      if (cells[2] === 'VERIFY') expect([cells[4], /^(D|REJECT)/.test(cells[5] ?? '')]).toEqual(['', true]);
    }
  });

  it('keeps long telegram lines inside their card, and leaves screenshots at 1280x800 and at a tablet 800x1280', async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await page.locator('#telegrams tr').first().waitFor();
    const wide = path.join(SCREENSHOTS, 'dashboard-1280x800.png');
    await page.screenshot({ path: wide });
    // The charts, further down the page.
    const charts = path.join(SCREENSHOTS, 'dashboard-last-hour-1280.png');
    await page.locator('#last-hour').screenshot({ path: charts });
    await page.setViewportSize({ width: 800, height: 1280 });
    await page.evaluate('window.scrollTo(0, 0)');
    await page.waitForTimeout(300);
    // In the page (a string: the tests are compiled without the DOM's types).
    const fits = (await page.evaluate(`(() => {
      const table = document.querySelector('table.telegrams');
      const panel = table.closest('.panel');
      return { table: table.scrollWidth, panel: panel.clientWidth, scrolls: panel.scrollWidth > panel.clientWidth };
    })()`)) as { table: number; panel: number; scrolls: boolean };
    expect(fits.scrolls).toBe(false);
    expect(fits.table).toBeLessThanOrEqual(fits.panel);
    const tablet = path.join(SCREENSHOTS, 'dashboard-800x1280.png');
    await page.screenshot({ path: tablet });
    for (const f of [wide, charts, tablet]) expect(fs.statSync(f).size).toBeGreaterThan(20_000);
    expect(problems).toEqual([]);
  });
});
