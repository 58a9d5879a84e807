// The session engine speaking each shipped layout, host and PLC back to back in memory: every
// message arrives once in both directions, refusals carry the layout's codes, the traffic log's
// lines replay, and 10,000 malformed telegrams each get a NAK or a log line, never a crash,
// while the telegram after each still arrives.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { TelegramSession } from '../../../lib/link/session';
import { HOST_RECEIVES, type Outbound, PLC_RECEIVES, RefuseError } from '../../../lib/link/session-port';
import { formatTrafficLine } from '../../../lib/link/traffic-log';
import { NakReason, type Telegram, type TelegramType } from '../../../bench/v1-codec';
import { TelegramWire } from '../../../lib/layout/wire';
import { readReplayLog } from '../../../lib/testmode/replay';
import type { InductDto, OutboundMessage } from '../../../model/messages';
import { SHIPPED, malformed, shippedCodec, valuesOf } from '../../helpers/layout-arbitraries';
import { atLeast } from '../../helpers/nth';

const wireOf = (name: string) => new TelegramWire(shippedCodec(name).layout);
const base = { heartbeatMs: 1000, ackTimeoutMs: 200, window: 8 };
const flush = () => new Promise((r) => setImmediate(r));

/** One end: a session with an in-memory list to send and a record of what it was given. */
function end(wire: TelegramWire, host: boolean, clock: () => number, deliver: (t: Telegram) => Promise<void>) {
  const pending: Outbound<number>[] = [];
  let sent = 0;
  let backlog = 0;
  const acked: number[] = [];
  const refused: Array<{ seq: number; code: number; text: string }> = [];
  const naksSent: number[] = [];
  const garbage: string[] = [];
  const traffic: string[] = [];
  const session = new TelegramSession<number>(
    host
      ? { name: 'WCS01', peerName: 'PLC01', receives: HOST_RECEIVES, peerKind: 'sorter' }
      : { name: 'PLC01', peerName: 'WCS01', receives: PLC_RECEIVES, peerKind: 'host' },
    wire.settings(base),
    {
      restart: () => {
        sent = 0;
        backlog = pending.length;
        return { epoch: host ? 'HOSTEPOCH001' : 'PLCEPOCH0001', nextSeq: pending[0]?.seq ?? 0 };
      },
      nextOutbound: (max) => {
        const items = pending.slice(sent, sent + max);
        sent += items.length;
        return items;
      },
      backlogSent: () => sent >= backlog,
      acknowledged: (seq) => {
        acked.push(seq);
        const i = pending.findIndex((p) => p.seq === seq);
        pending.splice(i, 1);
        if (i < sent) sent -= 1;
        if (i < backlog) backlog -= 1;
      },
      refused: (seq, r) => {
        refused.push({ seq, ...r });
        const i = pending.findIndex((p) => p.seq === seq);
        pending.splice(i, 1);
        if (i < sent) sent -= 1;
        if (i < backlog) backlog -= 1;
      },
      deliver: (t) => deliver(t),
    },
    clock,
    {
      nakSent: (seq) => naksSent.push(seq),
      garbage: (_bytes, reason) => garbage.push(reason),
      telegram: (direction, content, atMs) => traffic.push(formatTrafficLine(new Date(atMs), direction, content)),
    },
  );
  let next = 1;
  return {
    session,
    acked,
    refused,
    naksSent,
    garbage,
    traffic,
    send(type: TelegramType, data: string) {
      pending.push({ seq: next, type, data, ref: next });
      next = wire.nextSequence(next);
      session.pump();
    },
  };
}

/** Host and PLC of one layout, connected through two queues of frames. */
function pair(name: string, refuse: (t: Telegram) => Error | undefined = () => undefined) {
  let now = 1_000;
  const hostWire = wireOf(name);
  const plcWire = wireOf(name);
  const got = { host: [] as unknown[], plc: [] as unknown[] };
  const host = end(
    hostWire,
    true,
    () => now,
    (t) => {
      const err = refuse(t);
      if (err) return Promise.reject(err);
      got.host.push(hostWire.sorterMessageOf(t));
      return Promise.resolve();
    },
  );
  const plc = end(
    plcWire,
    false,
    () => now,
    (t) => {
      got.plc.push({ type: t.type, ...plcWire.decodeData(t.type, t.data) });
      return Promise.resolve();
    },
  );
  const toHost: string[] = [];
  const toPlc: string[] = [];
  host.session.attach((frame) => toPlc.push(frame));
  plc.session.attach((frame) => toHost.push(frame));
  const settle = async () => {
    // One telegram at a time (a window of 1) takes a round trip each: go on while anything moves.
    for (let i = 0; i < 2000 && (toHost.length > 0 || toPlc.length > 0 || i < 2); i++) {
      for (const f of toHost.splice(0)) host.session.receive(f);
      for (const f of toPlc.splice(0)) plc.session.receive(f);
      await flush();
    }
  };
  return { host, plc, got, hostWire, plcWire, settle, advance: (ms: number) => (now += ms), toHost };
}

describe.each(SHIPPED)('the session speaking layout %s', (name) => {
  const { layout } = shippedCodec(name);
  const sample = <T>(a: fc.Arbitrary<T>, n: number) => fc.sample(a, { numRuns: n });
  // A sorter without VERIFYs or destination lights (acme-cb8) has no VERI, SCAN or DSET.
  const some = <T>(type: 'VERI' | 'SCAN' | 'DSET', n: number, f: (v: Record<string, unknown>) => T): T[] =>
    layout.telegrams.has(type) ? sample(valuesOf(layout, type), n).map(f) : [];
  const resendAfterMs = wireOf(name).settings(base).ackTimeoutMs; // the layout's ResendMs, where it has one

  it('carries every sorter message to the host and every assignment and setting to the PLC, once, acknowledged', async () => {
    const p = pair(name);
    await p.settle();
    const messages = [
      ...sample(valuesOf(layout, 'REQU'), 20).map((v) => ({ Type: 'REQUEST', ...layout.telegrams.get('REQU')!.constants, ...v })),
      ...some('VERI', 10, (v) => ({ Type: 'VERIFY', ...layout.telegrams.get('VERI')!.constants, ...v })),
      ...some('SCAN', 10, (v) => ({ Type: 'SCAN', ...layout.telegrams.get('SCAN')!.constants, ...v })),
    ] as InductDto[];
    const outbound: OutboundMessage[] = [
      ...sample(valuesOf(layout, 'ASGN'), 20).map((body) => ({ kind: 'ASSIGNMENT', body }) as unknown as OutboundMessage),
      ...some('DSET', 10, (body) => ({ kind: 'DESTINATION', body }) as unknown as OutboundMessage),
    ];
    for (const m of messages) p.plc.send(...(Object.values(p.plcWire.sorterMessageData(m)) as [TelegramType, string]));
    for (const m of outbound) p.host.send(...(Object.values(p.hostWire.outboundData(m)) as [TelegramType, string]));
    await p.settle();
    expect(p.got.host).toEqual(messages);
    expect(p.got.plc.map((m) => (m as { type: string }).type)).toEqual(outbound.map((m) => (m.kind === 'ASSIGNMENT' ? 'ASGN' : 'DSET')));
    expect(p.plc.acked).toHaveLength(messages.length);
    expect(p.host.acked).toHaveLength(outbound.length);
    expect([p.host.session.inFlight, p.plc.session.inFlight, p.host.naksSent.length, p.plc.naksSent.length]).toEqual([0, 0, 0, 0]);
  });

  it("refuses with the layout's code for bad data: the sorter drops the telegram", async () => {
    const p = pair(name, () => new RefuseError(NakReason.BAD_DATA, 'unknown induct'));
    await p.settle();
    const [a] = atLeast(
      1,
      sample(valuesOf(layout, 'REQU'), 1).map((v) =>
        p.plcWire.sorterMessageData({ Type: 'REQUEST', ...layout.telegrams.get('REQU')!.constants, ...v } as InductDto),
      ),
    );
    p.plc.send(a.type, a.data);
    await p.settle();
    expect(p.plc.refused).toEqual([
      { seq: 1, code: layout.handshake.nakCodes.BadData, text: expect.stringMatching(/unknown induct|bad data/) },
    ]);
    expect(p.plc.session.inFlight).toBe(0);
  });

  it("refuses with the layout's code for cannot store now: the sorter keeps the telegram and sends it again", async () => {
    const refusals = [new Error('disk full')];
    const p = pair(name, () => refusals.shift());
    await p.settle();
    const [b] = atLeast(
      1,
      sample(valuesOf(layout, 'REQU'), 1).map((v) =>
        p.plcWire.sorterMessageData({ Type: 'REQUEST', ...layout.telegrams.get('REQU')!.constants, ...v } as InductDto),
      ),
    );
    p.plc.send(b.type, b.data);
    await p.settle();
    expect([p.got.host.length, p.plc.refused.length, p.plc.session.inFlight]).toEqual([0, 0, 1]);
    expect(p.host.naksSent).toEqual([1]);
    p.advance(resendAfterMs + 1);
    p.plc.session.tick();
    await p.settle();
    expect(p.got.host).toHaveLength(1);
    expect(p.plc.acked).toEqual([1]);
  });

  it("logs telegrams so that test mode replays the sorter's messages from the log", async () => {
    const p = pair(name);
    await p.settle();
    const [type, Type] = layout.telegrams.has('VERI') ? (['VERI', 'VERIFY'] as const) : (['REQU', 'REQUEST'] as const);
    const messages = sample(valuesOf(layout, type), 5).map((v) => ({ Type, ...layout.telegrams.get(type)!.constants, ...v }) as never);
    for (const m of messages) p.plc.send(...(Object.values(p.plcWire.sorterMessageData(m)) as [TelegramType, string]));
    await p.settle();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'traffic-'));
    try {
      const file = path.join(dir, 'Service_PLC.log');
      fs.writeFileSync(file, `${p.host.traffic.join('\n')}\n`);
      // A binary layout's bytes are written readably: a log line is printable ASCII.
      for (const line of p.host.traffic) expect(line).toMatch(/^[\x20-\x7e]*$/);
      const replayed: unknown[] = [];
      for await (const item of readReplayLog(file, wireOf(name))) replayed.push('message' in item ? item.message : item.problem);
      expect(replayed).toEqual(messages);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers 10,000 malformed telegrams each with a NAK or a log line, never a crash; the telegram after each still arrives', async () => {
    const items = fc.sample(malformed(shippedCodec(name)), { numRuns: 10_000, seed: 23 });
    const wire = wireOf(name);
    const got: unknown[] = [];
    let answered = 0;
    const host = end(
      wire,
      true,
      () => 1_000,
      (t) => {
        got.push(wire.sorterMessageOf(t));
        return Promise.resolve();
      },
    );
    const out: string[] = [];
    host.session.attach((frame) => out.push(frame));
    const plcWire = wireOf(name);
    items.forEach((item, n) => {
      const before = { naks: host.naksSent.length, garbage: host.garbage.length, got: got.length, out: out.length };
      host.session.receive(item.bytes);
      // A new session of the sorter (a reconnect, without resynchronisation), then one REQUEST
      // numbered 1: whatever the malformed telegram did to the numbering.
      let syns = '';
      if (plcWire.resync)
        syns = plcWire.encodeFrame({
          sender: 'PLC01',
          receiver: 'WCS01',
          seq: 0,
          type: 'SYNS',
          flag: 'D',
          data: plcWire.encodeData('SYNS', { Epoch: `E${n}`, NextSeq: 1 }),
        });
      else {
        host.session.detach();
        host.session.attach((frame) => out.push(frame));
      }
      const m = {
        Type: 'REQUEST',
        TrackID: `MARK${n}`,
        Barcode: '',
        MessageCode: 210,
        InductLocation: 'IND1',
        RecirculationCount: 0,
        Length: 1,
        Width: 2,
        Height: 3,
        Weight: 4,
      } as InductDto;
      const { type, data } = plcWire.sorterMessageData(m);
      host.session.receive(syns + plcWire.encodeFrame({ sender: 'PLC01', receiver: 'WCS01', seq: 1, type, flag: 'D', data }));
      const heard =
        host.naksSent.length > before.naks ||
        host.garbage.length > before.garbage ||
        got.length > before.got + 1 ||
        out.length > before.out + 2;
      if (heard) answered += 1;
      const last = got[got.length - 1] as InductDto | undefined;
      if (last?.TrackID !== `MARK${n}`)
        throw new Error(`${name} item ${n} (${item.kind}): the REQUEST after ${JSON.stringify(item.bytes.toString('latin1'))} was lost`);
    });
    // Telegrams whose change left them valid (a letter in a barcode) are kept as they are: the rest are answered.
    expect(answered).toBeGreaterThan(items.length * 0.5);
  });
});
