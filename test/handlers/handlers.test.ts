import type { ServiceStores } from '../../db/service-stores';
import { postAssignment } from '../../handlers/assignment';
import { dequeue, waitSeconds } from '../../handlers/dequeue';
import { normaliseDestinationSetting, postDestinationSettings } from '../../handlers/destination-settings';
import { housekeeping } from '../../handlers/housekeeping';
import { getStatus } from '../../handlers/status';
import { createLogger } from '../../lib/logger';
import type { OutboundMessage } from '../../lib/messages';
import type { SorterLink } from '../../lib/sorter-link';
import { WakeMeter } from '../../lib/latency';

/** An outbox that remembers what it was given, or refuses every write with `refuse` as the reason. */
function fakeOutbox(refuse?: string): Pick<ServiceStores['outbox'], 'add' | 'depth'> & { added: Array<{ message: OutboundMessage; client: string | null; at: string; cancelAfterMs?: number }> } {
  const added: Array<{ message: OutboundMessage; client: string | null; at: string; cancelAfterMs?: number }> = [];
  return {
    added,
    async add(message, client, at, options) {
      if (refuse) return { written: false, reason: refuse };
      added.push({ message, client, at, cancelAfterMs: options?.cancelAfterMs });
      return { written: true, value: added.length };
    },
    depth: () => added.length,
  };
}

const link = (delivery: 'Sent' | 'Queued'): SorterLink => ({
  status: () => ({ Connected: delivery === 'Sent', Address: 'plc:2000', Since: null, LastTelegramIn: null, LastTelegramOut: null }),
  offer: () => delivery,
  stop: async () => {},
});
const clock = () => new Date('2026-11-21T12:00:00.000Z');
const settings = { CommitTimeoutMs: 2000 };

describe('waitSeconds', () => {
  it.each([
    [undefined, 0, 0],
    [undefined, 7, 7],
    [5, 0, 5],
    [2.9, 0, 2],
    [-3, 10, 0],
    [31, 0, 30],
    [1e9, 0, 30],
    [0, 10, 0],
  ])('timeOut %p with default %p waits %p s', (timeOut, def, expected) => {
    expect(waitSeconds(timeOut, def)).toBe(expected);
  });
});

describe('dequeue', () => {
  it('asks the queue dispatcher for the clamped wait and passes the watch on the client', async () => {
    const calls: Array<[number, unknown]> = [];
    const dispatcher = { take: async (ms: number, gone?: unknown) => (calls.push([ms, gone]), null) };
    const signal = () => () => {};
    const deps = { dispatchers: { sortation: dispatcher, destination: dispatcher } as never, settings: { DefaultTimeOut: 3 } };
    expect(await dequeue(deps, { queue: 'sortation', timeOut: 99, gone: signal })).toEqual({ kind: 'empty' });
    expect(await dequeue(deps, { queue: 'destination' })).toEqual({ kind: 'empty' });
    expect(calls).toEqual([[30000, signal], [3000, undefined]]);
  });
});

describe('postAssignment', () => {
  it('live mode: writes the normalised assignment to the outbox and says how it travels', async () => {
    const outbox = fakeOutbox();
    const result = await postAssignment({ testMode: false, outbox, link: link('Queued'), clock, settings }, { body: { TrackID: '0004711', Destination: 'D1' }, clientAddress: '10.1.1.1' });
    expect(result).toEqual({ kind: 'ok', body: { Accepted: true, Delivery: 'Queued', OutboxID: 1, Message: { TrackID: '0004711', Destination: 'D1', Barcode: '' }, DefaultsApplied: [] } });
    expect(outbox.added).toEqual([{ message: { kind: 'ASSIGNMENT', body: { TrackID: '0004711', Destination: 'D1', Barcode: '' } }, client: '10.1.1.1', at: '2026-11-21T12:00:00.000Z', cancelAfterMs: 2000 }]);
  });

  it('storage that cannot write in time: 503 with the reason, as a value (nothing was written)', async () => {
    const outbox = fakeOutbox('addToOutbox not written: the storage did not start it within 2000 ms');
    const result = await postAssignment({ testMode: false, outbox, link: link('Queued'), clock, settings }, { body: { TrackID: '1', Destination: 'D1' }, clientAddress: null });
    expect(result).toEqual({ kind: 'unavailable', retryAfterSeconds: 1, reason: expect.stringMatching(/^not accepted, nothing was written, send it again: addToOutbox not written/) });
  });

  it('test mode: acknowledges and writes nothing', async () => {
    const outbox = fakeOutbox();
    const result = await postAssignment({ testMode: true, outbox, link: link('Sent'), clock, settings }, { body: { TrackID: '1', Destination: 'D1', Barcode: 'B' }, clientAddress: null });
    expect(result).toMatchObject({ body: { Delivery: 'NotSent', OutboxID: null, Message: { Barcode: 'B' } } });
    expect(outbox.added).toHaveLength(0);
  });
});

describe('destination settings', () => {
  it('parses enums case-insensitively into canonical values', () => {
    const { setting, defaults } = normaliseDestinationSetting({ Destination: 'D1', DestinationStatus: 'ready', LightStatus: 'FLASHING', LightColor: 'blue', BatchDoorStatus: 'opened', DestinationText: 'Tour 4' });
    expect(setting).toEqual({ Destination: 'D1', DestinationStatus: 'Ready', DestinationText: 'Tour 4', LightStatus: 'Flashing', LightColor: 'BLUE', BatchDoorStatus: 'OPENED' });
    expect(defaults).toEqual([]);
  });

  it('applies the spec defaults to values that do not parse, including missing ones, and lists them', () => {
    const { setting, defaults } = normaliseDestinationSetting({ Destination: 'D1', DestinationStatus: 'open', LightColor: 42, BatchDoorStatus: 'ajar' });
    expect(setting).toEqual({ Destination: 'D1', DestinationStatus: 'NotReady', DestinationText: '', LightStatus: 'Off', LightColor: 'Off', BatchDoorStatus: null });
    expect(defaults).toEqual([
      { Field: 'DestinationStatus', Received: 'open', Applied: 'NotReady' },
      { Field: 'LightStatus', Received: null, Applied: 'Off' },
      { Field: 'LightColor', Received: 42, Applied: 'Off' },
      { Field: 'BatchDoorStatus', Received: 'ajar', Applied: null },
    ]);
  });

  it('writes the normalised settings to the outbox in live mode', async () => {
    const outbox = fakeOutbox();
    const result = await postDestinationSettings({ testMode: false, outbox, link: link('Sent'), clock, settings }, { body: { Destination: 'D1', DestinationStatus: 'Ready', LightStatus: 'Off', LightColor: 'Off' }, clientAddress: null });
    expect(result).toMatchObject({ body: { Delivery: 'Sent', OutboxID: 1 } });
    expect(outbox.added[0].message).toEqual({ kind: 'DESTINATION', body: { Destination: 'D1', DestinationStatus: 'Ready', DestinationText: '', LightStatus: 'Off', LightColor: 'Off', BatchDoorStatus: null } });
  });
});

describe('getStatus', () => {
  it('reports the spec counters, the oldest age and the link', () => {
    const store = {
      depth: (q: string) => (q === 'sortation' ? 3 : 1),
      oldestReceivedAt: (q: string) => (q === 'sortation' ? '2026-11-21T11:59:30.000Z' : '2026-11-21T11:58:00.000Z'),
    };
    const waiting = (n: number, redelivered = 0) => ({ waiting: n, inFlight: 0, redelivered });
    const storage = { State: 'Stalled' as const, Since: '2026-11-21T11:59:58.000Z', WaitingFor: 'Lock' as const, PendingWrites: 4, LastCommitMs: 1.2, Commits: 3, Writes: 7, LastError: null, ReadOnly: false };
    const delivery = { Mode: 'AtLeastOnce' as const, AwaitingProof: 1, Confirmed: { NextRequest: 5, ClientClose: 2, ServerClose: 0, Grace: 0, Injected: 0 }, Returned: { Reset: 1, ClosedUnread: 0, NoProof: 1 } };
    const result = getStatus({
      testMode: false,
      version: '1.2.3',
      startedAt: new Date('2026-11-21T11:00:00.000Z'),
      clock,
      state: () => 'Running',
      store: store as never,
      outbox: { ...fakeOutbox(), peek: () => [], after: () => [], lastId: () => 0 },
      dispatchers: { sortation: waiting(2, 1), destination: waiting(0, 2) } as never,
      link: link('Queued'),
      replay: null,
      wake: new WakeMeter(),
      deliveries: { status: () => delivery },
      storage: { status: () => storage },
    });
    expect(result).toEqual({
      kind: 'ok',
      body: expect.objectContaining({
        'Sortation Q': 3,
        'Destination Q': 1,
        OldestMessageAgeSeconds: 120,
        UptimeSeconds: 3600,
        WaitingClients: { 'Sortation Q': 2, 'Destination Q': 0 },
        Delivery: { ...delivery, Redelivered: 3 },
        Storage: storage,
        Sorter: expect.objectContaining({ Connected: false, Address: 'plc:2000' }),
        Version: '1.2.3',
        TestMode: false,
      }),
    });
  });
});

describe('housekeeping', () => {
  it('purges history older than the retention and checkpoints', async () => {
    const cutoffs: string[] = [];
    const history = { purgeDeliveredBefore: async (c: string) => (cutoffs.push(c), 5), checkpoint: async () => ({ busy: false, walFrames: 0, checkpointed: 0 }) };
    const result = await housekeeping({ history, clock, settings: { HistoryRetentionDays: 7 }, log: createLogger('silent') });
    expect(cutoffs).toEqual(['2026-11-14T12:00:00.000Z']);
    expect(result).toMatchObject({ body: { PurgedHistoryRows: 5 } });
  });
});
