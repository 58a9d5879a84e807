// What GET /metrics reads from a running service (lib/ops/metrics-snapshot.ts), on a real SQLite
// file: ready and handed-out messages, the oldest message's age, waiting clients, the outbox, the
// link and the storage, each as the service's own parts say.
import { metricsSnapshot } from '../../../lib/ops/metrics-snapshot';
import type { DestinationInfoDto } from '../../../model/messages';
import { freePort } from '../../helpers/net';
import { type TestService, testService } from '../../helpers/service';
import { induct } from '../../helpers/messages';

const scan: DestinationInfoDto = {
  Type: 'SCAN',
  Destination: 'D1',
  DestinationStatus: 'Ready',
  DestinationText: '',
  LightStatus: 'Off',
  LightColor: 'Off',
  ButtonID: 0,
  MessageCode: 211,
  BatchDoorStatus: null,
};

let t: TestService;
afterEach(() => t.close());

it('reads the queues, the waiting clients, the outbox, the link and the storage as they are', async () => {
  t = await testService({ TestMode: false, Sorter: { Port: await freePort() } });
  const now = new Date('2026-03-01T12:00:00.000Z');
  await t.service.writer.run('enqueue', [[induct('A'), induct('B'), induct('C')], '2026-03-01T11:59:30.000Z']);
  const claim = await t.service.deps.dispatchers.sortation.take(0); // handed out, not yet read
  const waiting = t.service.deps.dispatchers.destination.take(10_000);
  // A's REQUEST came 2 s ago (past LateDecisionMs, 1000): answered late. B's has no assignment yet.
  t.service.deps.decisions.requested('A', performance.now() - 2000);
  t.service.deps.decisions.requested('B', performance.now());
  await t.server.inject({ method: 'POST', url: '/sortation', payload: { TrackID: 'A', Destination: 'D7' } });

  const s = await metricsSnapshot(t.service.deps, now);
  expect(s.queues).toEqual({
    sortation: { ready: 2, unacked: 1, oldestAgeSeconds: 30, waitingClients: 0 },
    destination: { ready: 0, unacked: 0, oldestAgeSeconds: null, waitingClients: 1 },
  });
  expect(s.outbox.depth).toBe(1);
  expect(s.outbox.oldestAgeSeconds).toEqual(expect.any(Number));
  expect(s.link).toMatchObject({ up: false, telegramsIn: 0, telegramsOut: 0 });
  expect(s.storage).toEqual({ state: 'Ok', pendingWrites: 0, syncs: expect.any(Number), ackedBeforeSync: 0, failures: 0 });
  expect(s).toMatchObject({
    requestsRemoved: { Superseded: 0, Expired: 0 },
    redelivered: 0,
    deadLetters: { sortation: 0, destination: 0 },
    deadLettered: 0,
    decisions: { awaiting: 1, late: 1 },
  });

  // The waiting client gets its message; the handed-out one goes back to the head.
  await t.publish([scan]);
  const delivered = await waiting;
  expect(delivered).not.toBeNull();
  claim!.release(true);
  const after = await metricsSnapshot(t.service.deps, now);
  expect(after.queues.sortation).toMatchObject({ ready: 3, unacked: 0 });
  expect(after.queues.destination).toMatchObject({ unacked: 1, waitingClients: 0 });
  delivered!.release();
});
