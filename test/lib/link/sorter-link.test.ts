// The sorter link (lib/link/sorter-link.ts) as the service builds it (createService in live mode,
// a real SQLite file), over real TCP on 127.0.0.1 against a PLC scripted here: it connects and
// resynchronises, acknowledges a data telegram only once it is committed, sends an outbox entry
// and removes it on the ACK, sends it again with the same number after a reconnect, and stops
// for good. More cases against the same PLC: test/e2e/scripted-plc.test.ts.
import { openReader } from '../../../db/connection';
import Database from '../../../db/sqlite';
import { encodeContent, encodeData, parseContent, sorterMessageData } from '../../../bench/v1-codec';
import type { InductDto } from '../../../model/messages';
import { induct } from '../../helpers/messages';
import { type ScriptedPlc, ack, scriptedPlc } from '../../helpers/scripted-plc';
import { type TestService, testService } from '../../helpers/service';
import { steadyWallMs } from '../../../lib/link/sorter-link';
import { until } from '../../helpers/until';

const request = induct('0004711', { Barcode: 'B1' });
/** A data telegram from the PLC, as its content between STX and ETX. */
const fromPlc = (seq: number, m: InductDto) => {
  const { type, data } = sorterMessageData(m);
  return encodeContent({ sender: 'PLC01', receiver: 'WCS01', seq, type, flag: 'D', data });
};

let t: TestService;
let plc: ScriptedPlc;
afterEach(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- unset when a test failed before making them */
  await t?.close();
  await plc?.close();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

/** The PLC listening, and the service linked to it (timings short for the test); `clock` and `steadyMs` as createService takes them. */
async function start(answer: Parameters<typeof scriptedPlc>[0], clock?: () => Date, steadyMs?: () => number) {
  plc = scriptedPlc(answer);
  const port = await plc.listening;
  t = await testService(
    {
      TestMode: false,
      Sorter: { Host: '127.0.0.1', Port: port, AckTimeoutMs: 100, HeartbeatMs: 1000, ReconnectMaxMs: 100 },
    },
    {},
    clock,
    steadyMs,
  );
  return port;
}
const link = () => t.service.deps.link;

it('connects and resynchronises (SYNS, then SYNE), and its status says where and since when', async () => {
  const port = await start((tg, send) => tg.flag === 'D' && send(ack(tg)));
  await until(() => plc.received.some((x) => x.type === 'SYNE'));
  expect(plc.received.filter((x) => x.flag === 'D').map((x) => x.type)).toEqual(['SYNS', 'SYNE']);
  const status = link().status();
  expect(status).toMatchObject({ Connected: true, Address: `127.0.0.1:${port}`, Reconnects: 0, ConnectionsLost: 0, NaksSent: 0 });
  expect(Date.now() - Date.parse(status.Since!)).toBeLessThan(5000);
  expect(status.TelegramsOut).toBeGreaterThanOrEqual(2);
});

it("on a quiet line sends its LIFE on the clock's multiples of the heartbeat, one a heartbeat (docs/sorter-protocol.md)", async () => {
  const lifeAt: number[] = [];
  await start((tg, send) => {
    if (tg.type === 'LIFE' && tg.flag === 'D') lifeAt.push(Date.now());
    if (tg.flag === 'D') send(ack(tg));
  });
  // The first LIFE may go after half a heartbeat, off the multiples; from the second on, each on one.
  await until(() => lifeAt.length >= 5, 15_000, 'five LIFEs');
  const settled = lifeAt.slice(2);
  // Each arrives within a little of its multiple of 1,000 ms (the timer, the loop, loopback).
  for (const at of settled) expect(at % 1000).toBeLessThan(100);
  const gaps = settled.slice(1).map((at, i) => at - settled[i]!);
  for (const gap of gaps) expect(Math.abs(gap - 1000)).toBeLessThan(100);
}, 20_000); // five heartbeats of 1 s after the start

it('acknowledges a data telegram only once it is committed; the message is in its queue when the ACK arrives', async () => {
  const atAck: unknown[] = [];
  await start((tg, send) => {
    if (tg.flag === 'D') send(ack(tg));
    // Read by a connection of its own at the moment the ACK arrives.
    if (tg.type === 'REQU' && tg.flag === 'A') {
      const reader = openReader(t.service.databaseFile);
      atAck.push(reader.prepare('SELECT track_id FROM sortation_queue').pluck().all());
      reader.close();
    }
  });
  await until(() => plc.received.some((x) => x.type === 'SYNE'));
  plc.toHost(fromPlc(1, request));
  await until(() => atAck.length === 1);
  expect(atAck).toEqual([['0004711']]);
  // In: the ACKs of our SYNS and SYNE, and the REQU.
  expect(link().status()).toMatchObject({ TelegramsIn: 3, DuplicatesReceived: 0, NaksSent: 0 });
  const seen = link()
    .recentTelegrams()
    .map((r) => ({ direction: r.Direction, ...parseContent(r.Telegram) }));
  expect(seen.filter((r) => r.type === 'REQU').map((r) => `${r.direction} ${r.flag} ${r.seq}`)).toEqual(['IN D 1', 'OUT A 1']);
  // The message went through the telegram trigger: a waiting client gets it.
  const res = await t.server.inject('/sortation?timeOut=0');
  expect([res.statusCode, JSON.parse(res.payload).TrackID]).toEqual([210, '0004711']);
});

it('a number the store cannot take though the one before was kept (link_state edited behind its back) is refused with 03, not 04: State Refusing in /status and /metrics until one is stored again', async () => {
  await start((tg, send) => tg.flag === 'D' && send(ack(tg)));
  await until(() => plc.received.some((x) => x.type === 'SYNE'));
  plc.toHost(
    encodeContent({
      sender: 'PLC01',
      receiver: 'WCS01',
      seq: 0,
      type: 'SYNS',
      flag: 'D',
      data: encodeData('SYNS', { Epoch: 'PLCEPOCH0001', NextSeq: 1 }),
    }),
  );
  plc.toHost(fromPlc(1, request));
  await until(() => plc.received.some((x) => x.type === 'REQU' && x.flag === 'A'));
  const db = new Database(t.service.databaseFile);
  db.pragma('busy_timeout = 5000');
  db.prepare('UPDATE link_state SET last_seq_in = 500').run();
  db.close();
  for (const seq of [2, 3]) plc.toHost(fromPlc(seq, { ...request, TrackID: `000471${seq}` }));
  await until(() => plc.received.filter((x) => x.type === 'REQU' && x.flag === 'N').length >= 2);
  const naks = plc.received.filter((x) => x.type === 'REQU' && x.flag === 'N');
  // 2 is refused for good (03); 3, numbered behind it, fails behind it first (04), then for good once resent.
  expect(naks.map((x) => `${x.seq}:${x.data.slice(0, 2)}`)[0]).toBe('2:03');
  expect(link().status()).toMatchObject({
    Connected: true,
    State: 'Refusing',
    RefusingBecause: expect.stringMatching(/telegram 2 from PLC01 out of sequence: expected the last stored number to be 1, it is 500/),
  });
  expect((await t.server.inject('/metrics')).payload).toMatch(/^sorter_integration_sorter_link_refusing 1$/m);
  // The sorter restarts (a new epoch): its numbering is taken up again, and the state ends.
  plc.toHost(
    encodeContent({
      sender: 'PLC01',
      receiver: 'WCS01',
      seq: 0,
      type: 'SYNS',
      flag: 'D',
      data: encodeData('SYNS', { Epoch: 'PLCEPOCH0002', NextSeq: 1 }),
    }),
  );
  plc.toHost(fromPlc(1, { ...request, TrackID: '0004719' }));
  await until(() => link().status().State === 'Connected');
  expect(link().status().RefusingBecause).toBeNull();
});

it('sends a POSTed assignment, and removes it from the outbox only on the ACK', async () => {
  let ackAssignments = false;
  await start((tg, send) => tg.flag === 'D' && (tg.type !== 'ASGN' || ackAssignments) && send(ack(tg)));
  await until(() => plc.received.some((x) => x.type === 'SYNE'));
  const posted = await t.server.inject({ method: 'POST', url: '/sortation', payload: { TrackID: '0004711', Destination: 'D007' } });
  expect(JSON.parse(posted.payload).Delivery).toBe('Sent');
  await until(() => plc.received.filter((x) => x.type === 'ASGN').length >= 2); // resent after the ACK timeout
  expect(t.service.deps.outbox.depth()).toBe(1);
  ackAssignments = true;
  await until(() => t.service.deps.outbox.depth() === 0);
  const asgn = plc.received.filter((x) => x.type === 'ASGN');
  expect(new Set(asgn.map((x) => x.seq)).size).toBe(1); // every resend under the same number
  expect(link().status().Resends).toBeGreaterThanOrEqual(1);
});

it('reconnects after the PLC drops it, sends the unacknowledged entry again with the same number, and counts the loss', async () => {
  let ackAssignments = false;
  await start((tg, send) => tg.flag === 'D' && (tg.type !== 'ASGN' || ackAssignments) && send(ack(tg)));
  await until(() => plc.received.some((x) => x.type === 'SYNE'));
  await t.server.inject({ method: 'POST', url: '/sortation', payload: { TrackID: '0004711', Destination: 'D007' } });
  await until(() => plc.received.some((x) => x.type === 'ASGN'));
  const seq = plc.received.find((x) => x.type === 'ASGN')!.seq;
  ackAssignments = true;
  const before = plc.received.length;
  plc.drop();
  await until(() => plc.accepted() === 2 && link().status().Connected === true);
  await until(() => t.service.deps.outbox.depth() === 0);
  const after = plc.received.slice(before);
  expect(
    after
      .filter((x) => x.flag === 'D')
      .map((x) => x.type)
      .slice(0, 1),
  ).toEqual(['SYNS']);
  expect(after.filter((x) => x.type === 'ASGN').map((x) => x.seq)).toEqual([seq]);
  expect(link().status()).toMatchObject({ Connected: true, Reconnects: 1, ConnectionsLost: 1 });
});

it('stop closes the connection and does not connect again', async () => {
  await start((tg, send) => tg.flag === 'D' && send(ack(tg)));
  await until(() => plc.connected() && link().status().Connected === true);
  await link().stop();
  await until(() => !plc.connected());
  await new Promise((r) => setTimeout(r, 400)); // twice the first reconnect delay
  expect(plc.accepted()).toBe(1);
});

it('a step of the system clock, forward an hour and back two, neither takes the link for dead nor stops its LIFEs; a silent PLC is still found dead', async () => {
  let offset = 0;
  const wall = () => new Date(Date.now() + offset);
  const lifeAt: number[] = [];
  let silent = false;
  await start(
    (tg, send) => {
      if (silent) return;
      if (tg.type === 'LIFE' && tg.flag === 'D') lifeAt.push(Date.now());
      if (tg.flag === 'D') send(ack(tg));
    },
    wall,
    steadyWallMs,
  );
  await until(() => plc.received.some((x) => x.type === 'SYNE'));
  const connectedAt = Date.now();
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  for (const step of [3_600_000, -7_200_000]) {
    offset += step; // NTP sets the system clock
    const before = lifeAt.length;
    await sleep(3500); // more than the 3 heartbeats of silence that declare a link dead
    expect(link().status()).toMatchObject({ Connected: true, ConnectionsLost: 0 });
    expect(lifeAt.length - before).toBeGreaterThanOrEqual(2);
    // What the status shows is the wall clock's time.
    expect(Math.abs(Date.parse(link().status().LastTelegramIn!) - wall().getTime())).toBeLessThan(2500);
    // Connected since as long ago as it was (SORTER_LINK_DOWN counts from it), on the wall clock.
    const connectedFor = wall().getTime() - Date.parse(link().status().Since!);
    expect(Math.abs(connectedFor - (Date.now() - connectedAt))).toBeLessThan(500);
  }
  silent = true;
  await until(() => (link().status().ConnectionsLost as number) >= 1, 6000, 'the silent PLC declared dead');
}, 30_000);
