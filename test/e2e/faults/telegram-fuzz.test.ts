// 10,000 generated telegrams at a live link: a PLC written by hand over a raw socket (framing
// and layouts formatted here from docs/sorter-protocol.md, not by our codec) sends valid data
// telegrams mixed with every kind of malformed one, split at random points. The service must
// never crash, NAK what is malformed with the documented code, and keep every valid one once.
import net from 'node:net';
import path from 'node:path';
import Database from '../../../db/sqlite';
import fc from 'fast-check';
import { call } from '../../helpers/http';
import { removeHome, tempHome } from '../../helpers/home';
import { type ServiceProcess, startServiceProcess } from '../../helpers/process';
import { SOAK, report, seed } from './scale';
import { nth } from '../../helpers/nth';

jest.setTimeout(120_000 * SOAK);

const STX = '\x02';
const ETX = '\x03';
const num = (v: number, width: number) => String(v).padStart(width, '0');
const text = (v: string, width: number) => v.padEnd(width, ' ');
const dec = (v: number, width: number) => v.toFixed(1).padStart(width, '0');
/** A frame as the PLC writes it: length of everything between STX and ETX, then the header. */
const frame = (seq: number | string, type: string, flag: string, data: string) => {
  const body = `PLC01 WCS01 ${typeof seq === 'number' ? num(seq, 6) : seq}${type}${flag}${data}`;
  return `${STX}${num(body.length + 4, 4)}${body}${ETX}`;
};

/** Printable ASCII without a trailing space (a text field cannot end with one). */
const printable = (max: number) =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: max }).map((s) => s.trimEnd());

type Item =
  | { kind: 'REQU' | 'VERI' | 'SCAN'; data: string; queue: 'sortation' | 'destination' }
  | { kind: 'badHeader'; make: (seq: number) => string; why: string }
  | { kind: 'wrongDirection'; type: 'ASGN' | 'DSET' }
  | { kind: 'badData'; type: 'REQU' | 'VERI' | 'SCAN'; data: string }
  | { kind: 'garbage'; bytes: string }
  | { kind: 'repeat' };

const requ = fc
  .record({
    id: printable(12),
    barcode: printable(48),
    induct: printable(12),
    recirc: fc.integer({ min: 0, max: 999 }),
    dims: fc.array(fc.double({ min: 0, max: 99999, noNaN: true }), { minLength: 4, maxLength: 4 }),
  })
  .map((r) => ({
    kind: 'REQU' as const,
    queue: 'sortation' as const,
    data: `00210${text(`T${r.id}`.trimEnd().slice(0, 20), 20)}${text(r.barcode, 48)}${text(`I${r.induct}`.trimEnd().slice(0, 12), 12)}${num(r.recirc, 3)}${r.dims.map((d) => dec(d, 9)).join('')}`,
  }));
const veri = fc.record({ id: printable(12), barcode: printable(48), dest: printable(11) }).map((r) => ({
  kind: 'VERI' as const,
  queue: 'sortation' as const,
  data: `00212${text(`T${r.id}`.trimEnd(), 20)}${text(r.barcode, 48)}${text(`D${r.dest}`.trimEnd(), 12)}`,
}));
const scan = fc
  .record({
    dest: printable(11),
    status: fc.constantFrom('Ready', 'NotReady'),
    light: fc.constantFrom('Off', 'Solid', 'Flashing'),
    color: fc.constantFrom('Off', 'RED', 'GREEN', 'BLUE', 'YELLOW', 'WHITE'),
    button: fc.integer({ min: 0, max: 999 }),
    door: fc.constantFrom('OPENED', 'CLOSED', ''),
    label: printable(40),
  })
  .map((r) => ({
    kind: 'SCAN' as const,
    queue: 'destination' as const,
    data: `00211${text(`D${r.dest}`.trimEnd(), 12)}${text(r.status, 8)}${text(r.light, 8)}${text(r.color, 8)}${num(r.button, 3)}${text(r.door, 6)}${text(r.label, 40)}`,
  }));

const badHeader = fc.oneof(
  fc.integer({ min: 0, max: 9999 }).map((len) => ({
    kind: 'badHeader' as const,
    why: 'length',
    // eslint-disable-next-line no-control-regex -- a frame starts with STX, a control character
    make: (seq: number) => frame(seq, 'LIFE', 'D', '').replace(/^\x02\d{4}/, `${STX}${num(len === 27 ? 28 : len, 4)}`),
  })),
  fc
    .constantFrom('XXXX', 'requ', '    ', 'RE U')
    .map((type) => ({ kind: 'badHeader' as const, why: 'type', make: (seq: number) => frame(seq, type, 'D', '') })),
  fc
    .constantFrom('X', 'd', ' ', '0')
    .map((flag) => ({ kind: 'badHeader' as const, why: 'flag', make: (seq: number) => frame(seq, 'LIFE', flag, '') })),
  fc
    .constantFrom('00A001', '-00001', '      ')
    .map((s) => ({ kind: 'badHeader' as const, why: 'sequence', make: () => frame(s, 'LIFE', 'D', '') })),
  fc
    .integer({ min: 0, max: 31 })
    .filter((c) => c !== 2 && c !== 3)
    .map((c) => ({
      kind: 'badHeader' as const,
      why: 'control character',
      make: (seq: number) => frame(seq, 'LIFE', 'D', `x${String.fromCharCode(c)}`),
    })),
  fc
    .integer({ min: 0x7f, max: 0xff })
    .map((c) => ({ kind: 'badHeader' as const, why: 'non-ASCII', make: (seq: number) => frame(seq, 'LIFE', 'D', String.fromCharCode(c)) })),
);
const badData = fc.oneof(
  requ.map((r) => ({ kind: 'badData' as const, type: 'REQU' as const, data: `0021X${r.data.slice(5)}` })), // MessageCode not a number
  requ.map((r) => ({ kind: 'badData' as const, type: 'REQU' as const, data: r.data.slice(0, -1) })), // one character short
  veri.map((r) => ({ kind: 'badData' as const, type: 'VERI' as const, data: `${r.data} ` })), // one character long
  scan.map((r) => ({ kind: 'badData' as const, type: 'SCAN' as const, data: `${r.data.slice(0, 17)}Maybe   ${r.data.slice(25)}` })), // not a DestinationStatus
);
const garbage = fc
  .string({
    unit: fc
      .integer({ min: 0, max: 255 })
      .filter((c) => c !== 2)
      .map((c) => String.fromCharCode(c)),
    minLength: 1,
    maxLength: 40,
  })
  .map((bytes) => ({ kind: 'garbage' as const, bytes }));
const item: fc.Arbitrary<Item> = fc.oneof(
  { weight: 12, arbitrary: fc.oneof(requ, veri, scan) },
  { weight: 2, arbitrary: badHeader },
  {
    weight: 1,
    arbitrary: fc.constantFrom('ASGN', 'DSET').map((type) => ({ kind: 'wrongDirection' as const, type: type as 'ASGN' | 'DSET' })),
  },
  { weight: 2, arbitrary: badData },
  { weight: 1, arbitrary: garbage },
  { weight: 1, arbitrary: fc.constant({ kind: 'repeat' as const }) },
);

interface Reply {
  seq: string;
  type: string;
  flag: string;
  code?: string;
}

describe('10,000 generated telegrams at a live link', () => {
  let home: string;
  let svc: ServiceProcess | undefined;
  let plc: net.Server | undefined;
  afterEach(async () => {
    if (svc && svc.proc.exitCode === null) await svc.stop();
    plc?.close();
    removeHome(home);
  });

  it('never a crash, a NAK with the documented code for what is malformed, every valid telegram kept once', async () => {
    const items = fc.sample(item, { numRuns: 10_000 * SOAK, seed });
    const replies: Reply[] = [];
    let buffered = '';
    const connected = new Promise<net.Socket>((resolve) => {
      plc = net.createServer((s) => {
        s.setEncoding('latin1');
        s.on('error', () => {});
        s.on('data', (chunk: string) => {
          buffered += chunk;
          for (let end = buffered.indexOf(ETX); end >= 0; end = buffered.indexOf(ETX)) {
            const content = buffered.slice(buffered.indexOf(STX) + 1, end);
            buffered = buffered.slice(end + 1);
            const r: Reply = {
              seq: content.slice(16, 22),
              type: content.slice(22, 26),
              flag: content.slice(26, 27),
              code: content.slice(27, 29),
            };
            // The host's own data telegrams (SYNS, LIFE) are acknowledged as a PLC would.
            if (r.flag === 'D') s.write(frame(Number(r.seq), r.type, 'A', ''), 'latin1');
            else replies.push(r);
          }
        });
        resolve(s);
      });
    });
    const plcPort = await new Promise<number>((resolve) =>
      plc!.listen(0, '127.0.0.1', () => resolve((plc!.address() as net.AddressInfo).port)),
    );
    home = tempHome({
      'config.json': {
        TestMode: false,
        Port: 0,
        Host: '127.0.0.1',
        DropSupersededRequests: false,
        Sorter: { Host: '127.0.0.1', Port: plcPort, HeartbeatMs: 2000, TrafficLog: false },
      },
    });
    svc = await startServiceProcess(home);
    const s = await connected;
    s.write(frame(0, 'SYNS', 'D', `${text('FUZZ01', 12)}000000`) + frame(0, 'SYNE', 'D', ''), 'latin1');

    // Send in reads split at random points, at most 64 valid telegrams unacknowledged (the window).
    // ACKs of data telegrams (the host also acknowledges our SYNS and SYNE).
    const acks = () => replies.filter((r) => r.flag === 'A' && ['REQU', 'VERI', 'SCAN'].includes(r.type)).length;
    const expected = { valid: 0, queued: { sortation: 0, destination: 0 }, nak01: 0, nak02: 0, nak03: 0, repeats: 0, garbage: 0 };
    const sentValid = new Map<string, string>(); // by sequence number: what a repeat sends again
    let seq = 0;
    let pending = '';
    const rnd = fc.sample(fc.integer({ min: 1, max: 200 }), { numRuns: items.length, seed });
    const flush = async () => {
      for (let i = 0; pending.length > 0; i++) {
        const cut = Math.min(pending.length, nth(rnd, i % rnd.length));
        s.write(pending.slice(0, cut), 'latin1');
        pending = pending.slice(cut);
      }
      // Acknowledgements for valid telegrams and repeats, with the window kept.
      const wanted = expected.valid + expected.repeats - 32;
      for (const end = Date.now() + 20_000; acks() < wanted && Date.now() < end;) await new Promise((r) => setTimeout(r, 2));
    };
    for (const [i, it] of items.entries()) {
      switch (it.kind) {
        case 'REQU':
        case 'VERI':
        case 'SCAN': {
          const f = frame(++seq, it.kind, 'D', it.data);
          sentValid.set(num(seq, 6), f);
          pending += f;
          expected.valid += 1;
          expected.queued[it.queue] += 1;
          break;
        }
        case 'repeat': {
          // A repeat of a telegram already acknowledged (one still being committed is answered
          // only after its commit, which is the same ACK): acknowledged again, kept once.
          const acked = replies.filter((r) => r.flag === 'A' && sentValid.has(r.seq)).slice(-100);
          if (acked.length === 0) continue;
          pending += sentValid.get(nth(acked, i % acked.length).seq);
          expected.repeats += 1;
          break;
        }
        case 'badHeader':
          pending += it.make(++seq);
          expected.nak01 += 1;
          break;
        case 'wrongDirection':
          pending += frame(++seq, it.type, 'D', '');
          expected.nak03 += 1;
          break;
        case 'badData':
          pending += frame(++seq, it.type, 'D', it.data);
          expected.nak02 += 1;
          break;
        case 'garbage':
          pending += it.bytes;
          expected.garbage += 1;
          break;
      }
      if (i % 50 === 49) await flush();
    }
    await flush();
    const naks = (code: string) => replies.filter((r) => r.flag === 'N' && r.code === code).length;
    const total = () => acks() + naks('01') + naks('02') + naks('03');
    const wantTotal = expected.valid + expected.repeats + expected.nak01 + expected.nak02 + expected.nak03;
    for (const end = Date.now() + 30_000; total() < wantTotal && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));

    const status = (await call(svc.base, 'GET', '/status')).json;
    const db = new Database(path.join(home, 'data/sorter.db'), { readonly: true });
    const rows = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    const queued = { sortation: rows('sortation_queue'), destination: rows('destination_queue') };
    db.close();
    const got = { acks: acks(), nak01: naks('01'), nak02: naks('02'), nak03: naks('03'), nak04: naks('04') };
    report('telegram-fuzz', {
      seed,
      telegrams: items.length,
      ...expected,
      ...got,
      duplicatesReceived: status.Sorter.DuplicatesReceived,
      garbageBytes: status.Sorter.GarbageBytes,
    });

    expect(svc.proc.exitCode).toBeNull();
    expect(status.Sorter.Connected).toBe(true);
    expect(status.Sorter.ConnectionsLost).toBe(0);
    expect(got).toEqual({
      acks: expected.valid + expected.repeats,
      nak01: expected.nak01,
      nak02: expected.nak02,
      nak03: expected.nak03,
      nak04: 0,
    });
    expect(queued).toEqual(expected.queued);
    expect(status.Sorter.DuplicatesReceived).toBe(expected.repeats);
  });
});
