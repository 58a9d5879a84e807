// The storage's state from the writer thread's status fields, with fields set by hand and a fixed
// now: Ok, Stalled on a lock or the disk, Failing and back, read-only. (On a real thread: writer.test.ts.)
import { RECOVERED_AFTER_MS, type StorageState, StorageMonitor } from '../../db/storage-status';
import { Field, Phase, STATUS_FIELDS } from '../../db/writer-protocol';

const NOW = Date.parse('2026-11-25T12:00:00.000Z');

describe('StorageMonitor', () => {
  let fields: BigInt64Array;
  let told: Array<[StorageState, string]>;
  const monitor = (readOnly = false) =>
    new StorageMonitor(fields, readOnly, { stallMs: 1000, onState: (state, detail) => told.push([state, detail]) });
  const set = (f: Field, value: number) => Atomics.store(fields, f, BigInt(value));
  beforeEach(() => {
    fields = new BigInt64Array(new SharedArrayBuffer(STATUS_FIELDS * 8));
    told = [];
  });

  it('Ok: the counters as the writer keeps them, the last commit in ms to one decimal (null before the first)', () => {
    const m = monitor();
    expect(m.status(0, NOW, NOW)).toMatchObject({
      State: 'Ok',
      WaitingFor: null,
      LastCommitMs: null,
      Commits: 0,
      Writes: 0,
      LastError: null,
      Failures: 0,
      LastFailure: null,
      ReadOnly: false,
    });
    set(Field.Commits, 3);
    set(Field.Writes, 40);
    set(Field.LastCommitUs, 12_345);
    set(Field.SyncedCommits, 2);
    expect(m.status(5, NOW, NOW)).toMatchObject({ State: 'Ok', PendingWrites: 5, LastCommitMs: 12.3, Commits: 3, Writes: 40, Syncs: 2 });
  });

  it('prompt: idle, or no phase of a transaction longer than maxMs, and not failing (a message may then be handed out before its commit)', () => {
    const m = monitor();
    expect(m.prompt(100, NOW)).toBe(true);
    set(Field.Phase, Phase.Lock);
    set(Field.PhaseSince, NOW - 100);
    expect(m.prompt(100, NOW)).toBe(true);
    set(Field.PhaseSince, NOW - 101); // an operator's lock, well before Stalled
    expect(m.prompt(100, NOW)).toBe(false);
    set(Field.Phase, Phase.Idle);
    expect(m.prompt(100, NOW)).toBe(true);
    m.failed('SQLITE_FULL: database or disk is full');
    expect(m.prompt(100, NOW)).toBe(false);
  });

  it('Stalled once a transaction is in flight for longer than stallMs, waiting for the lock or the disk', () => {
    const m = monitor();
    set(Field.Phase, Phase.Lock);
    set(Field.PhaseSince, NOW - 1000);
    expect(m.status(1, NOW, NOW).State).toBe('Ok');
    set(Field.PhaseSince, NOW - 1001);
    expect(m.status(1, NOW, NOW)).toMatchObject({ State: 'Stalled', WaitingFor: 'Lock', Since: new Date(NOW - 1001).toISOString() });
    set(Field.Phase, Phase.Sync);
    expect(m.status(1, NOW, NOW).WaitingFor).toBe('Disk');
    set(Field.Phase, Phase.Idle);
    expect(m.status(1, NOW, NOW).State).toBe('Ok');
  });

  it("times a stall by the fields' clock, not the wall clock: a step of the system clock neither makes one nor hides one", () => {
    const m = monitor();
    const shared = 5_000_000; // the monotonic clock: ms since boot
    set(Field.Phase, Phase.Write);
    set(Field.PhaseSince, shared - 300);
    // The wall clock set an hour forward while the transaction is in flight: not a stall.
    expect(m.status(1, NOW + 3_600_000, shared).State).toBe('Ok');
    expect(m.prompt(400, shared)).toBe(true);
    // Set back an hour: a stall of 1.5 s is one, shown as 1.5 s before the wall clock's now.
    set(Field.PhaseSince, shared - 1500);
    expect(m.status(1, NOW - 3_600_000, shared)).toMatchObject({
      State: 'Stalled',
      WaitingFor: 'Disk',
      Since: new Date(NOW - 3_600_000 - 1500).toISOString(),
    });
    set(Field.Phase, Phase.Idle);
    set(Field.SyncSince, shared - 2000);
    expect(m.status(1, NOW - 3_600_000, shared)).toMatchObject({ State: 'Stalled', SyncInFlightMs: 2000 });
  });

  it("times a failure by the fields' clock: after a step of the system clock, Since and LastFailure keep their age, and Ok is told on time", () => {
    const m = monitor();
    const shared = 5_000_000;
    m.failed('disk I/O error', shared);
    // The wall clock set back an hour 2 s later: failing for 2 s, as the wall clock now reads.
    const back = NOW - 3_600_000;
    expect(m.status(0, back, shared + 2000)).toMatchObject({
      State: 'Failing',
      Since: new Date(back - 2000).toISOString(),
      LastFailure: { At: new Date(back - 2000).toISOString() },
    });
    m.committed(shared + 2500);
    m.committed(shared + RECOVERED_AFTER_MS); // not an hour and 10 s on
    expect(told).toEqual([
      ['Failing', 'disk I/O error'],
      ['Ok', 'commits succeed again'],
    ]);
  });

  it('a sync of the WAL in flight for longer than stallMs is Stalled on the disk, with its duration; it never makes commits less than prompt', () => {
    const m = monitor();
    set(Field.SyncSince, NOW - 400);
    expect(m.status(0, NOW, NOW)).toMatchObject({ State: 'Ok', WaitingFor: null, SyncInFlightMs: 400, AckedBeforeSync: 0 });
    set(Field.SyncSince, NOW - 2500);
    set(Field.AnsweredBeforeSync, 37);
    expect(m.status(0, NOW, NOW)).toMatchObject({
      State: 'Stalled',
      WaitingFor: 'Disk',
      Since: new Date(NOW - 2500).toISOString(),
      SyncInFlightMs: 2500,
      AckedBeforeSync: 37,
    });
    // Commits go on beside it: messages are still handed out before their commit.
    expect(m.prompt(100, NOW)).toBe(true);
    // An operator's lock at the same time is what holds commits up: it is what /status names.
    set(Field.Phase, Phase.Lock);
    set(Field.PhaseSince, NOW - 1500);
    expect(m.status(0, NOW, NOW)).toMatchObject({ State: 'Stalled', WaitingFor: 'Lock', Since: new Date(NOW - 1500).toISOString() });
    expect(m.prompt(100, NOW)).toBe(false);
    set(Field.Phase, Phase.Idle);
    set(Field.SyncSince, 0);
    expect(m.status(0, NOW, NOW)).toMatchObject({ State: 'Ok', SyncInFlightMs: null, AckedBeforeSync: 37 });
  });

  it('Failing from a failed transaction until one commits: told once each way, the last error shown', () => {
    const m = monitor();
    m.committed(NOW);
    expect(told).toEqual([]);
    m.failed('disk I/O error', NOW);
    const since = m.status(0, NOW, NOW).Since;
    m.failed('database or disk is full', NOW + 500);
    expect(m.status(0, NOW + 500, NOW + 500)).toMatchObject({ State: 'Failing', Since: since, LastError: 'database or disk is full' });
    set(Field.Phase, Phase.Lock); // failing outranks stalled
    expect(m.status(0, NOW + 10_000, NOW + 10_000).State).toBe('Failing');
    m.committed(NOW + 10_500);
    // Ok again; the failures stay counted, and the last one is kept with its time.
    const ok = m.status(0, 0, 0);
    expect(ok).toMatchObject({
      State: 'Ok',
      LastError: null,
      Failures: 2,
      LastFailure: { At: new Date(NOW + 500).toISOString(), Error: 'database or disk is full' },
    });
    expect(told).toEqual([
      ['Failing', 'disk I/O error'],
      ['Ok', 'commits succeed again (2 transactions failed meanwhile)'],
    ]);
  });

  it('commits between failures (a disk full but for a few bytes): the state flips, what is told does not, until none failed for RECOVERED_AFTER_MS', () => {
    const m = monitor();
    for (let t = 0; t < 30_000; t += 1000) {
      m.failed('SQLITE_FULL: database or disk is full', NOW + t);
      expect(m.status(0, NOW + t, NOW + t).State).toBe('Failing');
      m.committed(NOW + t + 500);
      // Between two failures the state reads Ok, and messages may be handed out before their commit again.
      expect(m.status(0, NOW + t + 500, NOW + t + 500).State).toBe('Ok');
      expect(m.prompt(100, NOW + t + 500)).toBe(true);
    }
    expect(told).toEqual([['Failing', 'SQLITE_FULL: database or disk is full']]);
    // A commit less than RECOVERED_AFTER_MS after the last failure tells nothing; the first one after it does, once.
    m.committed(NOW + 29_000 + RECOVERED_AFTER_MS - 1);
    expect(told).toHaveLength(1);
    m.committed(NOW + 29_000 + RECOVERED_AFTER_MS);
    m.committed(NOW + 29_000 + RECOVERED_AFTER_MS + 1);
    expect(told).toEqual([
      ['Failing', 'SQLITE_FULL: database or disk is full'],
      ['Ok', 'commits succeed again (30 transactions failed meanwhile)'],
    ]);
    // A failure after that is told again.
    m.failed('disk I/O error', NOW + 60_000);
    expect(told.at(-1)).toEqual(['Failing', 'disk I/O error']);
    expect(m.status(0, NOW + 60_000, NOW + 60_000).Failures).toBe(31);
  });

  it('a read-only file is failing from the start and stays so', () => {
    const m = monitor(true);
    m.committed();
    expect(m.status(0, NOW, NOW)).toMatchObject({ State: 'Failing', ReadOnly: true, LastError: 'the database file is read-only' });
    expect(told).toEqual([]);
  });
});
