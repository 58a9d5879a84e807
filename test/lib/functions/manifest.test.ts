// manifest.json: every function, its module and its triggers; the loader refuses what cannot run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadHttpFunction, loadScheduledFunction, loadTelegramFunction } from '../../../lib/functions/define';
import { httpTriggers, loadManifest, scheduleTriggers, telegramTriggers } from '../../../lib/functions/manifest';

describe('manifest.json', () => {
  const manifest = loadManifest();

  it('shows every trigger: the HTTP routes, the schedule, and the telegrams from the sorter', () => {
    expect(
      httpTriggers(manifest)
        .map((t) => `${t.method} ${t.path}`)
        .sort(),
    ).toEqual([
      'GET /alarms',
      'GET /dashboard/data',
      'GET /dead-letters',
      'GET /destination',
      'GET /health/live',
      'GET /health/ready',
      'GET /items/{TrackID}',
      'GET /metrics',
      'GET /sortation',
      'GET /status',
      'POST /alarms/{id}/ack',
      'POST /dead-letters/requeue',
      'POST /destination',
      'POST /sortation',
    ]);
    expect(scheduleTriggers(manifest).map((t) => t.name)).toEqual(['housekeeping', 'historyBound', 'expireRequests']);
    expect(
      telegramTriggers(manifest)
        .flatMap((t) => t.types)
        .sort(),
    ).toEqual(['REQU', 'SCAN', 'VERI']);
  });

  it('names modules that export their function as fn, of the kind their trigger runs', () => {
    for (const t of httpTriggers(manifest)) expect(loadHttpFunction(t.fn.handler).binding.notes.length).toBeGreaterThan(0);
    for (const t of scheduleTriggers(manifest)) expect(loadScheduledFunction(t.fn.handler).kind).toBe('schedule');
    for (const t of telegramTriggers(manifest)) expect(loadTelegramFunction(t.fn.handler).kind).toBe('telegram');
    expect(() => loadScheduledFunction('handlers/status')).toThrow(
      /handlers\/status is a http function, it cannot have a schedule trigger/,
    );
    expect(() => loadHttpFunction('lib/functions/forward')).toThrow(/does not export a function definition as fn/);
  });

  it('refuses a bad manifest with every problem listed', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'manifest-'));
    try {
      const file = path.join(dir, 'manifest.json');
      fs.writeFileSync(
        file,
        JSON.stringify({
          service: 's',
          functions: {
            a: { handler: 'handlers/status.getStatus', description: 'x', events: [{ http: { method: 'PUT', path: '/a' } }] },
            b: { handler: 'handlers/housekeeping', description: 'x', events: [{ schedule: { cron: 'every minute' } }] },
            c: { handler: 'handlers/sorter-message', description: 'x', events: [{ telegram: { types: ['ASGN'] } }] },
          },
        }),
      );
      expect(() => loadManifest(file)).toThrow(
        /handler" with value "handlers\/status.getStatus" fails to match[\s\S]*method" must be one of \[GET, POST\][\s\S]*cron" is not a valid cron expression[\s\S]*types\[0\]" must be one of \[REQU, VERI, SCAN\]/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
