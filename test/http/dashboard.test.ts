// The dashboard's routes through server.inject: the page and its files open (no data in them),
// the feed behind the API key, and the feed's content from a real database.
import { csv, scanRow, verifyRow } from '../helpers/home';
import { until } from '../helpers/until';
import { type TestService, testService } from '../helpers/service';

const KEY = 'dashboard-test-key';
const replay = csv(
  'REQUEST,210,IND02,0004711,00012345678901234567,320.5,210,95,1.25,2,,,,,',
  verifyRow('0004711', 'D017'),
  scanRow('D017', 'NotReady'),
);

describe('the dashboard routes', () => {
  let t: TestService;
  beforeEach(
    async () => (t = await testService({ TestMode: true, ApiKeys: [KEY], ChartSampleSeconds: 0.1 }, { 'Service_PLC.csv': replay })),
  );
  afterEach(() => t.close());

  it('serves the page and its files without a key, with a content security policy, and nothing else from the folder', async () => {
    const page = await t.server.inject('/dashboard');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'self'/);
    // It tells the script to ask for the key before its first read.
    expect(page.payload).toContain('<body data-key-required="true">');
    for (const [file, type] of [
      ['dashboard.js', /javascript/],
      ['board.js', /javascript/],
      ['charts.js', /javascript/],
      ['dashboard.css', /text\/css/],
    ] as const) {
      const res = await t.server.inject(`/dashboard/assets/${file}`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(type);
    }
    // The charting library from node_modules, those two files only.
    for (const [file, type] of [
      ['uPlot.iife.min.js', /javascript/],
      ['uPlot.min.css', /text\/css/],
    ] as const) {
      const res = await t.server.inject(`/dashboard/assets/vendor/${file}`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(type);
      expect(res.payload.length).toBeGreaterThan(1000);
    }
    expect(page.payload).toContain('src="/dashboard/assets/vendor/uPlot.iife.min.js"');
    for (const path of [
      '/dashboard/assets/..%2Fpackage.json',
      '/dashboard/assets/../package.json',
      '/dashboard/assets/nothing.js',
      '/dashboard/assets/vendor/uPlot.cjs.js',
      '/dashboard/assets/vendor/..%2F..%2Fpackage.json',
      '/dashboard/assets/vendor/constructor',
    ]) {
      expect((await t.server.inject(path)).statusCode).toBeGreaterThanOrEqual(400);
    }
  });

  it('answers its feed only with the key: status, totals, the latest deliveries', async () => {
    const refused = await t.server.inject('/dashboard/data');
    expect(refused.statusCode).toBe(401);
    expect(JSON.parse(refused.payload)).toMatchObject({ statusCode: 401, message: 'missing X-API-Key header' });

    const headers = { 'x-api-key': KEY };
    const before = JSON.parse((await t.server.inject({ url: '/dashboard/data', headers })).payload);
    expect(before).toMatchObject({
      Status: { 'Sortation Q': 2, TestMode: true, Storage: { State: 'Ok' } },
      Telegrams: [],
      Decisions: [],
      Deliveries: [],
    });

    expect((await t.server.inject({ url: '/sortation', headers })).statusCode).toBe(210);
    await t.settled();
    const after = JSON.parse((await t.server.inject({ url: '/dashboard/data', headers })).payload);
    expect(after.Status['Sortation Q']).toBe(1);
    expect(after.Totals.Delivered).toEqual({ sortation: 1, destination: 0 });
    // A REQUEST's induct location is not its destination.
    expect(after.Deliveries).toEqual([
      expect.objectContaining({
        Queue: 'sortation',
        Type: 'REQUEST',
        TrackID: '0004711',
        Destination: null,
        InductLocation: 'IND02',
        WaitedMs: expect.any(Number),
      }),
    ]);
    expect(Date.parse(after.Deliveries[0].DeliveredAt)).not.toBeNaN();
  });

  it('shows the board from the SCANs committed, and the last hour in samples with rates over their window', async () => {
    const headers = { 'x-api-key': KEY };
    const read = async () => JSON.parse((await t.server.inject({ url: '/dashboard/data', headers })).payload);
    const first = await read();
    expect(first.Board).toEqual([
      expect.objectContaining({
        Destination: 'D017',
        DestinationStatus: 'NotReady',
        LightStatus: 'Off',
        LightColor: 'Off',
        ChangedBy: 'sorter',
        Wcs: null,
      }),
    ]);
    expect(first.LastHour).toMatchObject({ SampleSeconds: 0.1, LateDecisionMs: 1000 });
    expect(first.Rates).toMatchObject({ In: { sortation: 0, destination: 0 }, Out: { sortation: 0, destination: 0 } });

    expect((await t.server.inject({ url: '/sortation', headers })).statusCode).toBe(210);
    await t.settled();
    // Samples every 0.1 s: the delivery shows in one, and in the rates over the last minute.
    await until(
      async () => (await read()).LastHour.Samples.some((x: { Out: { sortation: number } }) => x.Out.sortation > 0),
      5_000,
      'a sample with the delivery',
    );
    const later = await read();
    expect(later.LastHour.Samples.length).toBeGreaterThanOrEqual(1);
    expect(later.LastHour.Samples[later.LastHour.Samples.length - 1]).toMatchObject({
      Depth: { sortation: 1, destination: 1 },
      LinkUp: null,
      Decisions: 0,
      DecisionP50Ms: null,
    });
    expect(later.Rates.Out.sortation).toBeGreaterThan(0);
    expect(later.Rates.Seconds).toBeGreaterThan(0);
  });
});
