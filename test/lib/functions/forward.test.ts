// What both POSTs share (lib/functions/forward.ts): the entry committed before its sync and sent
// at once while the sorter acknowledges telegrams, answered on its ACK or its sync, whichever comes
// first, also when it waits behind others for the window; encoded once.
import { StoredAges } from '../../../lib/queue/arrivals';
import { forward, type ForwardDeps } from '../../../lib/functions/forward';
import type { SorterLink } from '../../../lib/link/sorter-link-status';
import type { OutboundMessage } from '../../../model/messages';

const assignment: OutboundMessage = { kind: 'ASSIGNMENT', body: { TrackID: '0004711', Destination: 'D1', Barcode: '' } };

/** A live link whose window is full: every entry is queued, and acknowledged when the test says. */
function queuedLink() {
  const acks: Array<() => void> = [];
  const offered: Array<{ id: number; telegram: unknown }> = [];
  const link: SorterLink = {
    status: () => ({
      Connected: true,
      Address: 'plc:2000',
      Since: null,
      LastTelegramIn: null,
      LastTelegramOut: null,
      State: 'Connected',
      RefusingBecause: null,
    }),
    recentTelegrams: () => [],
    offer: (entry, acknowledged, telegram) => {
      offered.push({ id: entry.id, telegram });
      if (acknowledged) acks.push(acknowledged);
      return 'Queued';
    },
    acknowledgesPromptly: () => true,
    encode: () => ({ telegram: { type: 'ASGN', data: 'ENCODED' }, refused: null }),
    start: () => {},
    stop: async () => {},
  };
  return { link, acks, offered };
}

/** An outbox whose entries commit before their sync; the sync is the test's to end. */
function unsyncedOutbox() {
  const asked: Array<{ beforeSync?: boolean }> = [];
  let sync!: () => void;
  const synced = new Promise<void>((resolve) => (sync = resolve));
  const durableElsewhere = jest.fn();
  const outbox: ForwardDeps['outbox'] = {
    addToOutbox: async (_message, _client, _at, options) => {
      asked.push({ beforeSync: options?.beforeSync });
      return options?.beforeSync
        ? { written: true, value: 7, unsynced: { durable: synced, durableElsewhere } }
        : { written: true, value: 7 };
    },
  };
  return { outbox, asked, sync, durableElsewhere };
}

const settings = { CommitTimeoutMs: 2000, DurableBySorterAck: true };
const clock = () => new Date('2026-11-27T10:00:00.000Z');

describe('forward', () => {
  it('queued behind a full window: committed before its sync, answered on the ACK as Sent, not on a sync a stalled disk delays', async () => {
    const { link, acks, offered } = queuedLink();
    const { outbox, asked, durableElsewhere } = unsyncedOutbox();
    let answered = false;
    const result = forward(
      { testMode: false, outbox, link, clock, ages: new StoredAges(clock), settings },
      assignment,
      '10.1.1.1',
      [],
    ).then((r) => ((answered = true), r));
    await new Promise((r) => setImmediate(r));
    expect(asked).toEqual([{ beforeSync: true }]);
    expect(offered).toEqual([{ id: 7, telegram: { type: 'ASGN', data: 'ENCODED' } }]);
    expect(answered).toBe(false); // neither the ACK nor the sync yet
    acks[0]?.();
    expect(await result).toMatchObject({ kind: 'ok', status: 200, body: { Accepted: true, Delivery: 'Sent', OutboxID: 7 } });
    expect(durableElsewhere).toHaveBeenCalledTimes(1);
  });

  it('no ACK: answered once the sync made it durable, as Queued', async () => {
    const { link } = queuedLink();
    const { outbox, sync } = unsyncedOutbox();
    const result = forward({ testMode: false, outbox, link, clock, ages: new StoredAges(clock), settings }, assignment, null, []);
    await new Promise((r) => setImmediate(r));
    sync();
    expect(await result).toMatchObject({ kind: 'ok', status: 200, body: { Accepted: true, Delivery: 'Queued', OutboxID: 7 } });
  });
});
