// GET /status as a handler: the spec counters, the oldest age, the link, deliveries and storage.
import { StoredAges } from '../../lib/queue/arrivals';
import { getStatus } from '../../handlers/status';
import { DecisionMeter, WakeMeter } from '../../lib/ops/latency';
import { link, clock } from '../helpers/handler-fakes';

describe('getStatus', () => {
  it('reports the spec counters, the oldest age and the link', async () => {
    const store = {
      oldest: (q: string) => ({ id: 1, receivedAt: q === 'sortation' ? '2026-11-21T11:59:30.000Z' : '2026-11-21T11:58:00.000Z' }),
    };
    // Four stored REQUESTs, one of them handed out; one SCAN; the outbox holds two entries.
    const counts = {
      figures: async () => ({ sortation: { waiting: 3, handedOut: 1 }, destination: { waiting: 1, handedOut: 0 }, outbox: 2 }),
    };
    const waiting = (n: number, redelivered = 0, claimed: number[] = [], deadLettered = 0) => ({
      waiting: n,
      claimedIds: new Set(claimed),
      redelivered,
      deadLettered,
    });
    const storage = {
      State: 'Stalled' as const,
      Since: '2026-11-21T11:59:58.000Z',
      WaitingFor: 'Lock' as const,
      PendingWrites: 4,
      LastCommitMs: 1.2,
      Commits: 3,
      Writes: 7,
      Syncs: 2,
      SyncInFlightMs: null,
      AckedBeforeSync: 0,
      LastError: null,
      Failures: 2,
      LastFailure: { At: '2026-11-21T11:59:50.000Z', Error: 'SQLITE_FULL: database or disk is full' },
      ReadOnly: false,
    };
    const delivery = {
      Mode: 'AtLeastOnce' as const,
      AwaitingProof: 1,
      Confirmed: { NextRequest: 5, ClientClose: 2, ServerClose: 0, LastResponse: 4, Acknowledged: 0, Answered: 0, Grace: 0, Injected: 0 },
      Returned: { Reset: 1, ClosedUnread: 0, NoProof: 1 },
    };
    // The disk Low and the history cut short of its retention by the size bound: both as the watch last saw them.
    const disk = { State: 'Low' as const, FreeBytes: 1e9, SizeBytes: 32e9, LowBelowBytes: 3.2e9 };
    const history = {
      FilesBytes: 12e9,
      DatabaseBytes: 11.9e9,
      WalBytes: 16e6,
      TrafficLogBytes: 60e6,
      UsedDatabaseBytes: 11e9,
      BoundBytes: 12.8e9,
      BoundBy: 'HistoryMaxDiskShare' as const,
      Rows: 3e7,
      OldestAt: '2026-11-01T00:00:00.000Z',
      RetentionDays: 30,
      BytesPerDay: 6e8,
      DaysFit: 21.3,
      RetentionMet: false,
      SizeCutsFrom: '2026-11-22T12:00:00.000Z',
      Cuts: 0,
      CutRows: 0,
      LastCut: null,
      MeasuredAt: '2026-11-21T12:00:00.000Z',
    };
    // Two items asked for a decision 400 ms ago; one was answered.
    const decisions = new DecisionMeter(() => {}, { lateMs: 1000 });
    for (const id of ['0001', '0002']) decisions.requested(id, performance.now() - 400);
    decisions.assigned('0001');
    const result = await getStatus({
      testMode: false,
      version: '1.2.3',
      startedAt: new Date('2026-11-21T11:00:00.000Z'),
      clock,
      ages: new StoredAges(clock),
      state: () => 'Running',
      store: store as never,
      counts,
      dispatchers: { sortation: waiting(2, 1, [17], 3), destination: waiting(0, 2, [], 1) } as never,
      // One REQUEST whose commit is under way, not handed out: it counts as waiting.
      uncommitted: { counts: (q: string) => ({ waiting: q === 'sortation' ? 1 : 0, handedOut: 0 }) },
      deadLetters: { deadLetterCounts: () => ({ sortation: 2, destination: 1 }) },
      link: link('Queued'),
      replay: null,
      wake: new WakeMeter(),
      decisions,
      requestsRemoved: { Superseded: 2, Expired: 0 },
      deliveries: { status: () => delivery },
      storage: { status: () => storage },
      storageWatch: { status: () => history, diskStatus: () => disk },
      schema: { applied: 5, known: 5 },
    });
    expect(result).toEqual({
      kind: 'ok',
      status: 200,
      body: expect.objectContaining({
        // Not "Running" while the link is down and a commit waits: the problems say why.
        State: 'Degraded',
        Problems: [
          expect.stringMatching(
            /^database:writable: a commit has waited since 2026-11-21T11:59:58.000Z \(a lock held by another connection\)$/,
          ),
          expect.stringMatching(/^sorter:link: the sorter plc:2000 is not connected/),
        ],
        'Sortation Q': 4,
        'Destination Q': 1,
        OldestMessageAgeSeconds: 120,
        UptimeSeconds: 3600,
        WaitingClients: { 'Sortation Q': 2, 'Destination Q': 0 },
        Delivery: { ...delivery, Redelivered: 3, DeadLettered: 4 },
        DeadLetters: { 'Sortation Q': 2, 'Destination Q': 1 },
        Storage: { ...storage, Disk: disk, History: history },
        Sorter: expect.objectContaining({ Connected: false, Address: 'plc:2000' }),
        Version: '1.2.3',
        TestMode: false,
        Outbox: { Depth: 2 },
        DecisionLatency: { P50Ms: expect.any(Number), P99Ms: expect.any(Number), Samples: 1, Awaiting: 1, Late: 0 },
      }),
    });
  });
});
