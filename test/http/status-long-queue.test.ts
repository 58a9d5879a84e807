// GET /status and a /metrics scrape on a long queue (a WCS away for an hour leaves 180,000
// VERIFYs at 50 items/s): the queue is counted a slice at a time and a WCS's poll is answered
// while the count goes on, the figures exact. A real SQLite file, hapi's inject.
import { SLICE_ROWS, type TableCount } from '../../db/table-count';
import type { VerifyDto } from '../../model/messages';
import { type TestService, testService } from '../helpers/service';

let t: TestService;
afterEach(() => t.close());

const QUEUED = 3 * SLICE_ROWS + 123;
const verify = (trackId: string): VerifyDto => ({ Type: 'VERIFY', TrackID: trackId, Barcode: 'B', Destination: 'D1', MessageCode: 212 });

it('counts a long queue a slice at a time and answers a poll meanwhile', async () => {
  t = await testService({ TestMode: false, Sorter: { Port: 1 } });
  const parcels = Array.from({ length: QUEUED }, (_, i) => verify(String(i).padStart(7, '0')));
  await t.service.writer.run('enqueue', [parcels, new Date().toISOString()]);
  const tally: TableCount = t.service.deps.store.tally('sortation');
  const real = tally.slice.bind(tally);
  const order: string[] = [];
  let poll: Promise<unknown> | undefined;
  // A WCS's poll arrives once the count has begun.
  const slice = jest.spyOn(tally, 'slice').mockImplementation((ids, from, limit) => {
    poll ??= t.server.inject({ method: 'GET', url: '/sortation?timeOut=0' }).then((r) => (order.push('poll'), r));
    return real(ids, from, limit);
  });
  const s = await t.server.inject({ method: 'GET', url: '/status' });
  order.push('status');
  const p = (await poll) as { statusCode: number };

  expect(p.statusCode).toBe(212);
  expect(order).toEqual(['poll', 'status']);
  // Three full slices and the last; the message the poll took is counted as handed out or gone.
  expect(slice.mock.calls.length).toBe(4);
  expect(s.statusCode).toBe(200);
  // Each row as it stood when its slice was read: the message the poll took was waiting then, or
  // already handed out.
  expect(s.result).toMatchObject({ 'Destination Q': 0, Outbox: { Depth: 0 } });
  expect([QUEUED - 1, QUEUED]).toContain((s.result as { 'Sortation Q': number })['Sortation Q']);

  const metrics = await t.server.inject({ method: 'GET', url: '/metrics' });
  expect(metrics.payload).toMatch(new RegExp(`^sorter_integration_queue_messages_ready\\{queue="sortation"\\} ${QUEUED - 1}$`, 'm'));
  expect(metrics.payload).toMatch(/^sorter_integration_queue_messages_unacked\{queue="sortation"\} 1$/m);
  expect(slice.mock.calls.length).toBe(8);
});
