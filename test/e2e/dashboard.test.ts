// The dashboard in a real browser: Debian's Chromium, headless, driven by playwright-core, against
// the service as a child process in live mode with ApiKeys set, the emulator as its sorter and a
// WCS client answering. The page must load without a console error, ask for the key, show numbers
// that move while the sorter runs, answer an item lookup, and leave a screenshot.
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

jest.setTimeout(90_000);
const KEY = 'dashboard-e2e-key';

describeWhen(noChromium, 'the dashboard in headless Chromium')('the dashboard in headless Chromium', () => {
  let home: string;
  let emu: EmulatorProcess;
  let svc: ServiceProcess;
  let browser: Browser;
  let client: ReturnType<typeof runWcsClient>;

  beforeAll(async () => {
    emu = await startEmulator(['--port', '0', '--rate', '15', '--seed', '3', '--duration', '60']);
    home = tempHome({
      'config.json': {
        TestMode: false,
        Port: 0,
        Host: '127.0.0.1',
        ApiKeys: [KEY],
        ChartSampleSeconds: 2,
        Sorter: { Host: '127.0.0.1', Port: emu.port },
      },
    });
    svc = await startServiceProcess(home);
    client = runWcsClient({ base: svc.base, apiKey: KEY, loops: 1, timeOut: 1 });
    browser = await launchChromium();
  });
  afterAll(async () => {
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before making them */
    await browser?.close();
    await client?.stop();
    await emu?.stop();
    await svc?.stop();
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    removeHome(home);
  });

  const number = async (page: Page, id: string) => Number((await page.locator(`#${id}`).textContent())?.replace(/[^\d.]/g, '') || NaN);

  it('asks for the key, then shows live numbers, telegrams, deliveries and decisions, looks an item up, with no console error', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
    const problems: string[] = [];
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
    page.on('response', (r) => r.status() >= 400 && problems.push(`HTTP ${r.status()}: ${r.url()}`));

    await page.goto(`${svc.base}/dashboard`);
    // The feed needs the key: the page asks for it before reading anything.
    await page.locator('#key-form').waitFor({ state: 'visible' });
    expect(await page.locator('#updated').textContent()).toBe('never');
    await page.fill('#key', KEY);
    await page.click('#key-form button');

    await until(
      async () =>
        (await page.locator('#state').textContent()) === 'Running' && (await page.locator('#link-state').textContent()) === 'connected',
      15_000,
      'the page shows the service running with the sorter connected',
      200,
    );
    await until(
      async () =>
        (await page.locator('#telegrams tr').count()) > 0 &&
        (await page.locator('#deliveries tr').count()) > 0 &&
        (await number(page, 'decision-count')) > 0,
      15_000,
      'telegrams, deliveries and decisions appear',
      200,
    );
    const first = {
      telegramsIn: await number(page, 'total-telegrams-in'),
      received: await number(page, 'total-received'),
      delivered: await number(page, 'total-delivered'),
    };
    await until(
      async () =>
        (await number(page, 'total-telegrams-in')) > first.telegramsIn &&
        (await number(page, 'total-received')) > first.received &&
        (await number(page, 'total-delivered')) > first.delivered,
      15_000,
      'the totals move while the sorter runs',
      200,
    );
    await until(async () => (await number(page, 'rate-telegrams-in')) > 0, 15_000, 'a rate above zero', 200);
    expect(await page.locator('#storage-state').textContent()).toBe('Ok');
    // The WCS answers at once: the REQUESTs awaiting a decision are a handful at most.
    expect(await number(page, 'decisions-awaiting')).toBeLessThan(20);
    expect(await number(page, 'decisions-late')).toBeGreaterThanOrEqual(0);
    expect(await page.locator('#telegrams tr').first().textContent()).toMatch(/(IN|OUT).*(PLC01|WCS01)/);

    // The item lookup: the TrackID of the latest delivery, as an operator would type it.
    const trackId = (await page.locator('#deliveries tr td:nth-child(4)').first().textContent())!;
    expect(trackId).toMatch(/^\S+$/);
    await page.fill('#item-id', trackId);
    await page.click('#item-form button');
    await page.locator('#item-events tr').first().waitFor();
    expect(await page.locator('#item-events').textContent()).toContain('RequestReceived');
    // What the page shows is what the API says. The item may still be moving (its VERIFY can come
    // between the page's lookup and ours), so the page's rows are the API's first events, in order.
    const shown = await page.locator('#item-events tr td:nth-child(2)').allTextContents();
    const timeline = (await call(svc.base, 'GET', `/items/${trackId}`, undefined, { 'x-api-key': KEY })).json;
    expect(shown.length).toBeGreaterThan(0);
    expect(timeline.Events.length).toBeGreaterThanOrEqual(shown.length);
    expect(shown).toEqual(timeline.Events.slice(0, shown.length).map((e: { Event: string }) => e.Event));

    const shot = path.join(home, 'dashboard.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(fs.statSync(shot).size).toBeGreaterThan(10_000);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('reads its feed and the alarms every second and every 2 s, or at the pace of ?refresh=MS', async () => {
    /** The page's reads of the feed and of the alarms over `ms` after the key is given. */
    const reads = async (query: string, ms: number) => {
      const page = await browser.newPage();
      const seen = { feed: 0, alarms: 0 };
      page.on('request', (r) => {
        const url = new URL(r.url());
        if (url.pathname === '/dashboard/data') seen.feed += 1;
        if (url.pathname === '/alarms') seen.alarms += 1;
      });
      await page.goto(`${svc.base}/dashboard${query}`);
      await page.fill('#key', KEY);
      await page.click('#key-form button');
      await new Promise((r) => setTimeout(r, ms));
      await page.close();
      return seen;
    };
    // In 4.5 s: the feed at once and at 1, 2, 3 and 4 s; the alarms at load and every 2 s.
    const everySecond = await reads('', 4_500);
    expect(everySecond.feed).toBeGreaterThanOrEqual(4);
    expect(everySecond.alarms).toBeGreaterThanOrEqual(2);
    // With ?refresh=5000 the same 4.5 s hold one read of each (the alarms' first may come before the key and be refused).
    const slower = await reads('?refresh=5000', 4_500);
    expect(slower.feed).toBe(1);
    expect(slower.alarms).toBeLessThanOrEqual(2);
  });

  it('says so when the key is wrong, and reads nothing', async () => {
    const page = await browser.newPage();
    await page.goto(`${svc.base}/dashboard`);
    await page.fill('#key', 'not-the-key');
    await page.click('#key-form button');
    await until(async () => (await page.locator('#key-error').textContent()) === 'that key was refused', 15_000, 'the key is refused', 200);
    expect(await page.locator('#key-form').isVisible()).toBe(true);
    expect(await page.locator('#updated').textContent()).toBe('never');
    await page.close();
  });
});
