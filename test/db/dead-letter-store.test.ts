// Dead letters on a real SQLite file: out of the queue with who had them last, back under their
// old ids (so in their old places), counted and listed for operators.
import { deadLetterReads, deadLetterWrites } from '../../db/dead-letter-store';
import { createQueueStore } from '../../db/queue-store';
import type { DestinationInfoDto, InductDto } from '../../model/messages';
import { freshDb } from '../helpers/db';
import { atLeast } from '../helpers/nth';

const request = (t: string): InductDto => ({
  Type: 'REQUEST',
  TrackID: t,
  Barcode: `B${t}`,
  MessageCode: 210,
  InductLocation: 'IND01',
  RecirculationCount: 1,
  Length: 1.5,
  Width: 0,
  Height: 2,
  Weight: 0.25,
});
const scan: DestinationInfoDto = {
  Type: 'SCAN',
  Destination: 'D7',
  DestinationStatus: 'Ready',
  DestinationText: '',
  LightStatus: 'Off',
  LightColor: 'Off',
  ButtonID: 0,
  MessageCode: 211,
  BatchDoorStatus: null,
};
const info = (attempts: number) => ({ attempts, clientAddress: '10.0.0.9', lastReturn: 'NoProof', deadAt: '2026-11-25T12:00:00.000Z' });

describe('dead-letter store', () => {
  let ctx: ReturnType<typeof freshDb>;
  beforeEach(() => (ctx = freshDb()));
  afterEach(() => ctx.dispose());

  it('moves a message out of its queue with its attempts and last client, and sends it back under its old id, in its old place', () => {
    const queues = createQueueStore(ctx.db);
    const reads = deadLetterReads(ctx.db);
    const writes = deadLetterWrites(ctx.db);
    queues.enqueue([request('1'), request('2'), request('3')], '2026-11-25T11:00:00.000Z');
    const head = queues.head('sortation', [])!;
    expect(writes.deadLetter(head, info(10))).toBe(true);
    expect(writes.deadLetter(head, info(10))).toBe(false); // no longer queued
    expect(queues.head('sortation', [])!.message).toMatchObject({ TrackID: '2' });
    expect(reads.deadLetterCounts()).toEqual({ sortation: 1, destination: 0 });
    expect(reads.listDeadLetters(10)).toEqual([
      {
        Id: 1,
        Queue: 'sortation',
        MessageId: head.id,
        Type: 'REQUEST',
        TrackID: '1',
        Destination: 'IND01',
        ReceivedAt: '2026-11-25T11:00:00.000Z',
        DeadAt: '2026-11-25T12:00:00.000Z',
        Attempts: 10,
        LastClient: '10.0.0.9',
        LastReturn: 'NoProof',
        Message: request('1'),
      },
    ]);

    expect(writes.requeueDeadLetters([1])).toEqual([{ queue: 'sortation', messageId: head.id, attempts: 10 }]);
    expect(reads.deadLetterCounts()).toEqual({ sortation: 0, destination: 0 });
    const back = queues.head('sortation', [])!;
    expect(back).toEqual(head); // the same id, message and arrival time: the head again
  });

  it('sends back all of them, either queue, and skips unknown ids', () => {
    const queues = createQueueStore(ctx.db);
    const writes = deadLetterWrites(ctx.db);
    queues.enqueue([request('1'), scan], 'T');
    writes.deadLetter(queues.head('sortation', [])!, info(3));
    writes.deadLetter(queues.head('destination', [])!, info(4));
    expect(deadLetterReads(ctx.db).listDeadLetters(10, 'destination')).toMatchObject([
      { Queue: 'destination', Type: 'SCAN', TrackID: null, Destination: 'D7', Message: scan },
    ]);
    expect(writes.requeueDeadLetters([99])).toEqual([]);
    expect(writes.requeueDeadLetters(null).map((r) => r.queue)).toEqual(['sortation', 'destination']);
    expect(queues.head('destination', [])!.message).toEqual(scan);
    expect(queues.depth('sortation') + queues.depth('destination')).toBe(2);
  });

  it("new messages never take a dead letter's id (id_floors): it can always go back", () => {
    const queues = createQueueStore(ctx.db);
    const writes = deadLetterWrites(ctx.db);
    const [id] = atLeast(1, queues.enqueue([request('1')], 'T'));
    writes.deadLetter(queues.head('sortation', [])!, info(10));
    const [next] = queues.enqueue([request('2')], 'T');
    expect(next).toBeGreaterThan(id);
    writes.requeueDeadLetters(null);
    expect(queues.head('sortation', [])!.id).toBe(id);
  });
});
