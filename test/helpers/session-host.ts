// Test helper: a telegram session driven with frames and a fake clock, no sockets. A host-side
// session over an in-memory outbox, with a deliver the test settles; and a sorter's session and a
// host's back to back, the host keeping telegrams as the service does.
import { TelegramSession } from '../../lib/link/session';
import { HOST_RECEIVES, type Outbound, PLC_RECEIVES, RefuseError } from '../../lib/link/session-port';
import { NakReason, type Telegram, TelegramError, type TelegramType, encodeData, encodeFrame, parseContent } from '../../bench/v1-codec';

/** Timing and window of the sessions under test. */
export const settings = { heartbeatMs: 1000, ackTimeoutMs: 200, window: 2 };
/** Frames from `peer` to `me`. */
export const from =
  (peer: string, me: string) =>
  (seq: number, type: TelegramType, flag: Telegram['flag'], data = '') =>
    encodeFrame({ sender: peer, receiver: me, seq, type, flag, data });
/** The data of a VERIFY telegram. */
export const verify = encodeData('VERI', { MessageCode: 212, TrackID: '0004711', Barcode: '', Destination: 'D1' });

/** A host-side session with an in-memory outbox of `outbound` items and a deliver the test controls. */
export function host(
  outbound: Outbound<string>[] = [],
  peer: { epoch: string | null; lastSeqIn: number; lastStopClean?: boolean } = { epoch: null, lastSeqIn: 0 },
) {
  let now = 1_000;
  const wire: Telegram[] = [];
  const delivered: Array<{ seq: number; after: number | null; resent: boolean; arrivedAt?: number; settle(ok: boolean | Error): void }> =
    [];
  const acked: string[] = [];
  const refused: string[] = [];
  const sessions: Array<[string, number]> = [];
  let sent = 0;
  let backlog = 0;
  const session = new TelegramSession<string>(
    { name: 'WCS01', peerName: 'PLC01', receives: HOST_RECEIVES, peerKind: 'sorter' },
    settings,
    {
      restart: () => {
        sent = 0;
        backlog = outbound.length;
        return { epoch: 'HOSTEPOCH001', nextSeq: outbound[0]?.seq ?? 0 };
      },
      nextOutbound: (max) => {
        const items = outbound.slice(sent, sent + max);
        sent += items.length;
        return items;
      },
      backlogSent: () => sent >= backlog,
      acknowledged: (ref) => acked.push(ref),
      refused: (ref, r) => refused.push(`${ref}:${r.code}`),
      deliver: (t, after, resent) =>
        new Promise<void>((resolve, reject) =>
          delivered.push({
            seq: t.seq,
            after,
            resent,
            arrivedAt: t.arrivedAt,
            settle: (ok) => (ok === true ? resolve() : reject(ok === false ? new Error('disk') : ok)),
          }),
        ),
      peerSession: (epoch, last) => sessions.push([epoch, last]),
    },
    () => now,
    {},
    peer,
  );
  const plc = from('PLC01', 'WCS01');
  return {
    session,
    wire,
    delivered,
    acked,
    refused,
    sessions,
    plc,
    advance: (ms: number) => (now += ms),
    connect: () => session.attach((frame) => wire.push(parseContent(frame.slice(1, -1)))),
    take: () => wire.splice(0).map((t) => `${t.type}${t.flag}${t.seq}`),
  };
}
/** Let settled deliveries answer (their promise callbacks). */
export const flush = () => new Promise((r) => setImmediate(r));

/** A host-side session attached to a connection, its handshake already taken off the wire. */
export function connectedHost(outbound: Outbound<string>[] = []) {
  const h = host(outbound);
  h.connect();
  h.take();
  return h;
}

/** How the host answers one delivery: kept, refused for good, or not stored now. */
export type HostAnswer = 'keep' | 'bad field' | 'no function' | 'disk full';

/**
 * A sorter's session and a host's back to back in memory, the sorter sending VERIFYs (window
 * 8). The host answers as the service does: a bad field is refused at once (NAK 02), a type no
 * function takes when its delivery settles (NAK 03), and it keeps a telegram as the database
 * does, only if the last number stored is `after` (otherwise, or with a full disk: NAK 04).
 * `answer` is asked for each delivery with its attempt (1 the first time that number arrives).
 */
export function sorterToHost(answer: (seq: number, attempt: number) => HostAnswer = () => 'keep') {
  let now = 1_000;
  const kept: number[] = [];
  const attempts = new Map<number, number>();
  const host = new TelegramSession<string>(
    { name: 'WCS01', peerName: 'PLC01', receives: HOST_RECEIVES, peerKind: 'sorter' },
    { ...settings, window: 8 },
    {
      restart: () => ({ epoch: 'HOSTEPOCH001', nextSeq: 0 }),
      nextOutbound: () => [],
      backlogSent: () => true,
      acknowledged: () => undefined,
      refused: () => undefined,
      deliver: (t, after) => {
        const attempt = (attempts.get(t.seq) ?? 0) + 1;
        attempts.set(t.seq, attempt);
        const a = answer(t.seq, attempt);
        if (a === 'bad field') throw new TelegramError('Destination', '', 'a destination');
        return Promise.resolve().then(() => {
          if (a === 'no function') throw new RefuseError(NakReason.UNEXPECTED, 'no function takes VERI');
          const last = kept.at(-1) ?? 0;
          if (after !== null && last !== after)
            throw new Error(`telegram ${t.seq} out of sequence: expected the last stored number to be ${after}, it is ${last}`);
          if (a === 'disk full') throw new Error('disk full');
          kept.push(t.seq);
        });
      },
    },
    () => now,
  );
  const pending: Outbound<number>[] = [];
  let sent = 0;
  let backlog = 0;
  const acked: number[] = [];
  const refused: string[] = [];
  const settled = (seq: number) => {
    const i = pending.findIndex((p) => p.seq === seq);
    pending.splice(i, 1);
    if (i < sent) sent -= 1;
    if (i < backlog) backlog -= 1;
  };
  const sorter = new TelegramSession<number>(
    { name: 'PLC01', peerName: 'WCS01', receives: PLC_RECEIVES, peerKind: 'host' },
    { ...settings, window: 8 },
    {
      restart: () => {
        sent = 0;
        backlog = pending.length;
        return { epoch: 'PLCEPOCH0001', nextSeq: pending[0]?.seq ?? 0 };
      },
      nextOutbound: (max) => {
        const items = pending.slice(sent, sent + max);
        sent += items.length;
        return items;
      },
      backlogSent: () => sent >= backlog,
      acknowledged: (seq) => {
        acked.push(seq);
        settled(seq);
      },
      refused: (seq, r) => {
        refused.push(`${seq}:${r.code}`);
        settled(seq);
      },
      deliver: () => Promise.resolve(),
    },
    () => now,
  );
  const toHost: string[] = [];
  const toSorter: string[] = [];
  host.attach((frame) => toSorter.push(frame));
  sorter.attach((frame) => toHost.push(frame));
  let next = 1;
  /** Carry frames both ways, and let deliveries settle, until nothing moves. */
  const settle = async () => {
    for (let i = 0; i < 100 && (toHost.length > 0 || toSorter.length > 0 || i < 2); i++) {
      for (const f of toHost.splice(0)) host.receive(f);
      for (const f of toSorter.splice(0)) sorter.receive(f);
      await flush();
    }
  };
  return {
    host,
    sorter,
    /** Numbers the host kept, in the order kept. */
    kept,
    /** What the sorter had acknowledged, and refused for good (`seq:code`). */
    acked,
    refused,
    settle,
    /** The sorter numbers a new VERIFY and sends it if its window allows. */
    send() {
      pending.push({ seq: next, type: 'VERI', data: verify, ref: next });
      next += 1;
      sorter.pump();
    },
    /** The sorter's ACK timeout passes: it resends everything unacknowledged. */
    resend() {
      now += settings.ackTimeoutMs + 1;
      sorter.tick();
    },
  };
}
