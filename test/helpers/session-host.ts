// Test helper: a telegram session driven with frames and a fake clock, no sockets. A host-side
// session over an in-memory outbox, with a deliver the test settles.
import { TelegramSession } from '../../lib/link/session';
import { HOST_RECEIVES, type Outbound } from '../../lib/link/session-port';
import { type Telegram, type TelegramType, encodeData, encodeFrame, parseContent } from '../../lib/telegram/codec';

/** Timing and window of the sessions under test. */
export const settings = { heartbeatMs: 1000, ackTimeoutMs: 200, window: 2 };
/** Frames from `peer` to `me`. */
export const from = (peer: string, me: string) => (seq: number, type: TelegramType, flag: Telegram['flag'], data = '') => encodeFrame({ sender: peer, receiver: me, seq, type, flag, data });
/** The data of a VERIFY telegram. */
export const verify = encodeData('VERI', { MessageCode: 212, TrackID: '0004711', Barcode: '', Destination: 'D1' });

/** A host-side session with an in-memory outbox of `outbound` items and a deliver the test controls. */
export function host(outbound: Outbound<string>[] = [], peer = { epoch: null as string | null, lastSeqIn: 0 }) {
  let now = 1_000;
  const wire: Telegram[] = [];
  const delivered: Array<{ seq: number; after: number; settle(ok: boolean | Error): void }> = [];
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
      deliver: (t, after) =>
        new Promise<void>((resolve, reject) => delivered.push({ seq: t.seq, after, settle: (ok) => (ok === true ? resolve() : reject(ok === false ? new Error('disk') : ok)) })),
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
