// The dashboard's alarms in a real browser: Debian's Chromium, headless, driven by playwright-core,
// against the service as a child process in live mode with named keys, the emulator as its
// sorter. Stopping the emulator raises SORTER_LINK_DOWN within its threshold and the banner
// shows it; a click acknowledges it (the journal says who and when); it clears when the
// emulator returns.
import type { Browser, Page } from 'playwright-core';
import { launchChromium, noChromium } from '../helpers/chromium';
import { type EmulatorProcess, startEmulator } from '../helpers/emulator';
import { call } from '../helpers/http';
import { removeHome, tempHome } from '../helpers/home';
import { type ServiceProcess, startServiceProcess } from '../helpers/process';
import { until } from '../helpers/until';
import { describeWhen } from '../helpers/tools';

jest.setTimeout(90_000);
const KEYS = [
  { Name: 'shift-lead', Key: 'operator-key', Role: 'operator' },
  { Name: 'prometheus', Key: 'monitor-key', Role: 'monitor' },
];
// Only the link's alarm: the others are switched off (0), so that the banner holds it alone.
const ALARMS = {
  EvaluateSeconds: 1,
  LinkDownSeconds: 3,
  SorterSilentSeconds: 0,
  WcsPollSeconds: 0,
  QueueAgeSeconds: 0,
  OutboxAgeSeconds: 0,
  MinFreeDiskBytes: 0,
};

describeWhen(noChromium, 'the dashboard alarms in headless Chromium')('the dashboard alarms in headless Chromium', () => {
  let home: string;
  let emu: EmulatorProcess | undefined;
  let svc: ServiceProcess;
  let browser: Browser;
  let port: number;

  beforeAll(async () => {
    emu = await startEmulator(['--port', '0', '--rate', '2', '--seed', '5']);
    port = emu.port;
    home = tempHome({
      'config.json': {
        TestMode: false,
        Port: 0,
        Host: '127.0.0.1',
        ApiKeys: KEYS,
        LateDecisionMs: 0,
        Alarms: ALARMS,
        Sorter: { Host: '127.0.0.1', Port: port, ReconnectMaxMs: 500 },
      },
    });
    svc = await startServiceProcess(home);
    browser = await launchChromium();
  });
  afterAll(async () => {
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before making them */
    await browser?.close();
    await emu?.stop();
    await svc?.stop();
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    removeHome(home);
  });

  const journalRow = (page: Page) => page.locator('#alarm-journal tr', { hasText: 'SORTER_LINK_DOWN' }).first();

  it('link down: the banner within the threshold, a click acknowledges it (who and when in the journal), cleared when the sorter is back', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const problems: string[] = [];
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('response', (r) => r.status() >= 400 && problems.push(`HTTP ${r.status()}: ${r.url()}`));

    await page.goto(`${svc.base}/dashboard?refresh=500`);
    await page.locator('#key-form').waitFor({ state: 'visible' });
    await page.fill('#key', 'operator-key');
    await page.click('#key-form button');
    await until(
      async () => (await page.locator('#link-state').textContent()) === 'connected',
      15_000,
      'the page shows the sorter connected',
      200,
    );
    expect(await page.locator('#alarm-banner').isVisible()).toBe(false);

    // The sorter stops.
    const stoppedAt = Date.now();
    await emu!.stop();
    emu = undefined;
    const item = page.locator('#alarm-banner li[data-code="SORTER_LINK_DOWN"]');
    await item.waitFor({ state: 'visible', timeout: 15_000 });
    const shownAfter = Date.now() - stoppedAt;
    // Its threshold, a look (EvaluateSeconds) and a refresh of the page (0.5 s), with room for a busy machine.
    expect(shownAfter).toBeLessThan((ALARMS.LinkDownSeconds + ALARMS.EvaluateSeconds + 0.5 + 3) * 1000);
    expect(shownAfter).toBeGreaterThanOrEqual(ALARMS.LinkDownSeconds * 1000 - 500);
    expect(await item.textContent()).toMatch(/CRITICAL.*SORTER_LINK_DOWN.*disconnected.*What to do: The sorter's PLC is not connected/);
    expect(await journalRow(page).textContent()).toMatch(/^active.*critical.*SORTER_LINK_DOWN/);

    // The shift lead acknowledges it: the banner goes, the journal says who and when.
    await item.locator('button.ack').click();
    await page.locator('#alarm-banner').waitFor({ state: 'hidden', timeout: 10_000 });
    await until(
      async () => /shift-lead, \d/.test((await journalRow(page).locator('td.acked').textContent()) ?? ''),
      10_000,
      'the journal names who acknowledged it',
      200,
    );
    const api = (await call(svc.base, 'GET', '/alarms', undefined, { 'x-api-key': 'monitor-key' })).json;
    const alarm = api.Active.find((a: { Code: string }) => a.Code === 'SORTER_LINK_DOWN');
    expect(alarm).toMatchObject({ AcknowledgedBy: 'shift-lead', AcknowledgedAt: expect.any(String), ClearedAt: null });
    expect(await svc.logLine((l) => l.msg === `alarm SORTER_LINK_DOWN (#${alarm.Id}) acknowledged by shift-lead`)).toHaveLength(1);

    // The sorter is back: the alarm clears, the journal keeps it.
    emu = await startEmulator(['--port', String(port), '--rate', '2', '--seed', '6']);
    await until(
      async () => /^cleared/.test((await journalRow(page).textContent()) ?? ''),
      15_000,
      'the journal shows the alarm cleared',
      200,
    );
    expect(await page.locator('#alarm-banner').isVisible()).toBe(false);
    expect(await journalRow(page).textContent()).toContain('shift-lead');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('a monitor key may not open the dashboard: the page asks for an operator key', async () => {
    const page = await browser.newPage();
    await page.goto(`${svc.base}/dashboard`);
    await page.fill('#key', 'monitor-key');
    await page.click('#key-form button');
    await until(
      async () => /operator key/.test((await page.locator('#key-error').textContent()) ?? ''),
      15_000,
      'the page asks for an operator key',
      200,
    );
    expect(await page.locator('#updated').textContent()).toBe('never');
    await page.close();
  });
});
