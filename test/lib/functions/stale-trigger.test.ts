// The stale-REQUEST trigger (lib/functions/stale-trigger.ts): in live mode with
// MaxRequestAgeSeconds set, a REQUEST older than that is stale, and the expiry runs the function
// manifest.json binds to the trigger (handlers/expire-requests.ts) on a real queue file.
import { createQueueStore } from '../../../db/queue-store';
import type { Deps } from '../../../lib/deps';
import { loadManifest } from '../../../lib/functions/manifest';
import { staleRequestExpiry } from '../../../lib/functions/stale-trigger';
import type { StoredMessage } from '../../../db/queue-rows';
import type { VerifyDto } from '../../../model/messages';
import { freshDb } from '../../helpers/db';
import { capturingLogger } from '../../helpers/log';
import { induct as request } from '../../helpers/messages';

const verify = (t: string): VerifyDto => ({ Type: 'VERIFY', TrackID: t, Barcode: '', Destination: 'D1', MessageCode: 212 });

const manifest = loadManifest();
const at = (receivedAt: string, message: StoredMessage['message']) => ({ id: 1, queue: 'sortation', message, receivedAt }) as StoredMessage;

it('is off in test mode, with MaxRequestAgeSeconds 0, or when the manifest binds no function to it', () => {
  const deps = () => ({}) as Deps;
  expect(staleRequestExpiry(manifest, { TestMode: true, MaxRequestAgeSeconds: 1 }, deps)).toBeNull();
  expect(staleRequestExpiry(manifest, { TestMode: false, MaxRequestAgeSeconds: 0 }, deps)).toBeNull();
  expect(staleRequestExpiry({ service: 's', functions: {} }, { TestMode: false, MaxRequestAgeSeconds: 1 }, deps)).toBeNull();
});

it('a REQUEST older than MaxRequestAgeSeconds is stale, a VERIFY never; the expiry takes the stale ones out as Expired', async () => {
  const ctx = freshDb();
  try {
    const store = createQueueStore(ctx.db);
    const now = new Date('2026-11-28T12:00:10.000Z');
    const { log, lines } = capturingLogger('debug');
    const requestsRemoved = { Superseded: 0, Expired: 0 };
    const deps = {
      testMode: false,
      store,
      settings: { MaxRequestAgeSeconds: 1.5 },
      requestsRemoved,
      clock: () => now,
      log,
    } as unknown as Deps;
    const expiry = staleRequestExpiry(manifest, { TestMode: false, MaxRequestAgeSeconds: 1.5 }, () => deps)!;
    expect(expiry.isStale(at('2026-11-28T12:00:08.400Z', request('1')), now)).toBe(true);
    expect(expiry.isStale(at('2026-11-28T12:00:08.600Z', request('1')), now)).toBe(false);
    expect(expiry.isStale(at('2026-11-28T12:00:00.000Z', verify('1')), now)).toBe(false);
    store.enqueue([request('old'), verify('v')], '2026-11-28T12:00:08.000Z');
    store.enqueue([request('new')], '2026-11-28T12:00:09.000Z');
    await expiry.expire();
    expect(ctx.db.prepare('SELECT track_id FROM sortation_queue ORDER BY id').pluck().all()).toEqual(['v', 'new']);
    expect(ctx.db.prepare("SELECT track_id FROM delivered_history WHERE removed_reason = 'Expired'").pluck().all()).toEqual(['old']);
    expect(requestsRemoved.Expired).toBe(1);
    expect(lines.map((l) => l.msg)).toEqual(['1 REQUESTs older than MaxRequestAgeSeconds taken out of the queue']);
  } finally {
    ctx.dispose();
  }
});
