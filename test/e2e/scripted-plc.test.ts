// The service's sorter link against a PLC scripted by the test over real TCP, framing written by
// hand: an independent check of the wire format, so a bug shared by both ends of the session
// engine cannot hide behind the emulator.
import Database from '../../db/sqlite';
import { encodeContent, encodeData, nakData, sorterMessageData } from '../../bench/v1-codec';
import { seqOfOutboxId } from '../../lib/link/outbox-feed';
import { type TestService, testService } from '../helpers/service';
import { type ScriptedPlc, ack, scriptedPlc } from '../helpers/scripted-plc';
import { freePort } from '../helpers/net';
import { until } from '../helpers/until';
import { induct } from '../helpers/messages';

describe('TcpSorterLink against a scripted PLC', () => {
  let t: TestService;
  let plc: ScriptedPlc;
  afterEach(async () => {
    await t.close();
    plc.server.close();
  });

  async function start(answer: Parameters<typeof scriptedPlc>[0], sorter: object = {}) {
    plc = scriptedPlc(answer);
    const port = await plc.listening;
    t = await testService({ TestMode: false, Sorter: { Port: port, AckTimeoutMs: 150, HeartbeatMs: 1000, ...sorter } });
  }
  const post = (url: string, payload: object) => t.server.inject({ method: 'POST', url, payload });

  it('sends an assignment, resends it with the same number until acknowledged, then removes it from the outbox', async () => {
    let asgnSeen = 0;
    await start((tg, send) => {
      if (tg.type === 'ASGN' && tg.flag === 'D' && ++asgnSeen === 3) send(ack(tg));
    });
    await until(() => t.service.deps.link.status().Connected === true);
    const res = JSON.parse((await post('/sortation', { TrackID: '0004711', Destination: 'D001' })).payload);
    expect(res.Delivery).toBe('Sent');
    await until(() => t.service.deps.outbox.depth() === 0);
    const asgn = plc.received.filter((x) => x.type === 'ASGN');
    expect(asgn).toHaveLength(3);
    expect(new Set(asgn.map((x) => x.seq))).toEqual(new Set([seqOfOutboxId(res.OutboxID)]));
    expect(asgn[0]?.data).toBe(encodeData('ASGN', { TrackID: '0004711', Barcode: '', Destination: 'D001' }));
    expect(t.service.deps.link.status().Resends).toBe(2);
  });

  it('sends an outbox entry nobody offered (written straight to the table) within a heartbeat', async () => {
    await start((tg, send) => {
      if (tg.type === 'ASGN' && tg.flag === 'D') send(ack(tg));
    });
    await until(() => t.service.deps.link.status().Connected === true && plc.received.some((x) => x.type === 'SYNE'));
    // The link reads the outbox when an entry is offered; its tick also looks, and it ticks at
    // least once a heartbeat while connected (our LIFE after a heartbeat of silence: 1 s here).
    await t.service.writer.run('addToOutbox', [
      { kind: 'ASSIGNMENT', body: { TrackID: 'UNOFFERED', Destination: 'D1', Barcode: '' } },
      null,
      new Date().toISOString(),
    ]);
    await until(() => t.service.deps.outbox.depth() === 0, 2500); // not waiting for a reconnect's resync (3 s here)
    expect(plc.received.filter((x) => x.type === 'ASGN' && x.flag === 'D').map((x) => x.data)).toEqual([
      encodeData('ASGN', { TrackID: 'UNOFFERED', Barcode: '', Destination: 'D1' }),
    ]);
  });

  it('moves a telegram the PLC refuses (NAK) to outbox_dropped with the reason', async () => {
    await start((tg, send) => {
      if (tg.type === 'DSET' && tg.flag === 'D')
        send(
          encodeContent({
            sender: 'PLC01',
            receiver: 'WCS01',
            seq: tg.seq,
            type: 'DSET',
            flag: 'N',
            data: nakData(2, 'unknown destination D999'),
          }),
        );
    });
    await until(() => t.service.deps.link.status().Connected === true);
    await post('/destination', { Destination: 'D999', DestinationStatus: 'Ready' });
    await until(() => t.service.deps.outbox.depth() === 0);
    expect(t.service.db.prepare('SELECT kind, destination, reason FROM outbox_dropped').all()).toEqual([
      { kind: 'DESTINATION', destination: 'D999', reason: 'NAK 2: unknown destination D999' },
    ]);
    expect(t.service.deps.link.status()).toMatchObject({ NaksReceived: 1, DroppedAssignments: 0, DroppedSettings: 1 });
  });

  it('drops an assignment older than its time to live instead of sending it', async () => {
    await start(() => {}, { AssignmentTtlSeconds: 1 });
    // Written while the link is down, two minutes ago (as if the service had been stuck).
    await t.service.writer.run('addToOutbox', [
      { kind: 'ASSIGNMENT', body: { TrackID: 'OLD', Destination: 'D1', Barcode: '' } },
      null,
      new Date(Date.now() - 120_000).toISOString(),
    ]);
    await until(() => t.service.deps.outbox.depth() === 0);
    expect(plc.received.some((x) => x.type === 'ASGN')).toBe(false);
    expect(t.service.db.prepare('SELECT track_id, reason FROM outbox_dropped').get()).toEqual({
      track_id: 'OLD',
      reason: expect.stringMatching(/older than AssignmentTtlSeconds/),
    });
    expect(t.service.deps.link.status().DroppedAssignments).toBe(1);
  });

  it('while the commit waits (a lock held by another process), a repeat is not acknowledged ahead of it', async () => {
    const acks: number[] = [];
    await start((tg) => {
      if (tg.type === 'REQU' && tg.flag === 'A') acks.push(t.service.deps.store.depth('sortation'));
    });
    await until(() => plc.received.some((x) => x.type === 'SYNS'));
    const operator = new Database(t.service.databaseFile);
    operator.exec('BEGIN IMMEDIATE');
    const { type, data } = sorterMessageData(induct('0004711', { Barcode: 'B' }));
    const requ = encodeContent({ sender: 'PLC01', receiver: 'WCS01', seq: 1, type, flag: 'D', data });
    plc.toHost(requ);
    await new Promise((r) => setTimeout(r, 200));
    plc.toHost(requ); // the sorter's resend after its ACK timeout
    await until(() => t.service.deps.link.status().DuplicatesReceived === 1, 5000, 'the resend taken for a repeat');
    expect(acks).toEqual([]); // nothing acknowledged before it is durable
    operator.exec('COMMIT');
    operator.close();
    await until(() => acks.length === 1);
    expect(acks).toEqual([1]);
    expect(t.service.deps.store.depth('sortation')).toBe(1);
  });

  it('acknowledges a REQU only once it is in the queue, a repeat again without queuing it, garbage with NAK 01', async () => {
    const depthAtAck: number[] = [];
    await start((tg) => {
      if (tg.type === 'REQU' && tg.flag === 'A') depthAtAck.push(t.service.deps.store.depth('sortation'));
    });
    await until(() => plc.received.some((x) => x.type === 'SYNS'));
    const { type, data } = sorterMessageData({
      Type: 'REQUEST',
      TrackID: '0004711',
      Barcode: 'B',
      MessageCode: 210,
      InductLocation: 'IND01',
      RecirculationCount: 0,
      Length: 1,
      Width: 2,
      Height: 3,
      Weight: 4,
    });
    const requ = encodeContent({ sender: 'PLC01', receiver: 'WCS01', seq: 5, type, flag: 'D', data });
    plc.toHost(requ);
    await until(() => depthAtAck.length === 1);
    expect(depthAtAck).toEqual([1]); // committed before the ACK left
    plc.toHost(requ);
    await until(() => depthAtAck.length === 2);
    expect(t.service.deps.store.depth('sortation')).toBe(1);
    expect(t.service.deps.link.status().DuplicatesReceived).toBe(1);
    // The repeat is recognised after a restart too: the number is stored with the message.
    expect(t.service.db.prepare('SELECT last_seq_in FROM link_state').pluck().get()).toBe(5);

    // A waiting client gets the message the moment it is committed; the wake latency is measured
    // for it, and not for the first message, which nobody was waiting for (it queued).
    const waiting = t.server.inject('/sortation?timeOut=5');
    expect((await waiting).statusCode).toBe(210);
    const next = t.server.inject('/sortation?timeOut=5');
    await until(() => t.service.deps.dispatchers.sortation.waiting === 1);
    const sentAt = performance.now();
    plc.toHost(encodeContent({ sender: 'PLC01', receiver: 'WCS01', seq: 6, type, flag: 'D', data }));
    expect((await next).statusCode).toBe(210);
    const answeredMs = performance.now() - sentAt;
    const wake = JSON.parse((await t.server.inject('/status')).payload).WakeLatency;
    expect(wake.Samples).toBe(1);
    // From the telegram's arrival to the response's write: within what the test saw from sending
    // the telegram to reading the response, and not nothing (the commit to the disk is in it).
    expect(wake.P99Ms).toBe(wake.P50Ms);
    expect(wake.P99Ms).toBeGreaterThan(0);
    expect(wake.P99Ms).toBeLessThanOrEqual(answeredMs + 0.01);

    plc.toHost('0099this is not a telegram');
    await until(() => plc.received.some((x) => x.flag === 'N'));
    const nak = plc.received.find((x) => x.flag === 'N')!;
    expect(nak.data.slice(0, 2)).toBe('01');
    expect(t.service.deps.link.status().NaksSent).toBe(1);
  });
  describe("a POST answered on the sorter's ACK, before its sync (DurableBySorterAck)", () => {
    const storage = async () =>
      JSON.parse((await t.server.inject('/status')).payload).Storage as { Syncs: number; SyncInFlightMs: number | null };
    const storageSyncs = async () => (await storage()).Syncs;
    const assign = async (trackId: string) => {
      const started = performance.now();
      const res = await post('/sortation', { TrackID: trackId, Destination: 'D001' });
      return { status: res.statusCode, body: JSON.parse(res.payload), ms: performance.now() - started };
    };

    it('acknowledged at once: answered without a sync of its own; acknowledged late: answered once the writer synced it, within the commit window', async () => {
      let ackAfterMs = 0;
      const acks: NodeJS.Timeout[] = [];
      await start((tg, send) => {
        if (tg.type === 'ASGN' && tg.flag === 'D') acks.push(setTimeout(() => send(ack(tg)), ackAfterMs));
      });
      await until(() => t.service.deps.link.status().Connected === true && plc.received.some((x) => x.type === 'SYNE'));
      // The first entry reserves a block of numbers: that one is synced. Its POST may be answered
      // on the sorter's ACK while that sync is still in flight (a slow disk): wait for it to end.
      const atStart = await storageSyncs();
      expect((await assign('T0')).status).toBe(200);
      await until(async () => {
        const { Syncs, SyncInFlightMs } = await storage();
        return Syncs > atStart && SyncInFlightMs === null;
      });
      const before = await storageSyncs();
      for (let i = 1; i <= 5; i++) {
        const r = await assign(`T${i}`);
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ Accepted: true, Delivery: 'Sent' });
      }
      expect(await storageSyncs()).toBe(before);
      // Every one of them is in the database (committed, not synced) and settled by the sorter's ACK.
      await until(() => t.service.deps.outbox.depth() === 0);
      expect(t.service.db.prepare("SELECT count(*) FROM outbox_history WHERE fate = 'Acknowledged'").pluck().get()).toBe(6);

      // The sorter takes 2 s to acknowledge: the writer syncs the entry once the commit window is over, and the POST is answered then.
      ackAfterMs = 2000;
      const late = await assign('LATE');
      expect(late.status).toBe(200);
      expect(late.ms).toBeLessThan(1500);
      expect(await storageSyncs()).toBe(before + 1);
      expect(t.service.deps.outbox.depth()).toBe(1); // the sorter has not acknowledged it yet
      for (const a of acks) clearTimeout(a);
    });

    it('DurableBySorterAck false: each POST is answered once synced', async () => {
      await start((tg, send) => {
        if (tg.type === 'ASGN' && tg.flag === 'D') send(ack(tg));
      });
      await t.close();
      t = await testService({
        TestMode: false,
        DurableBySorterAck: false,
        Sorter: { Port: await plc.listening, AckTimeoutMs: 150, HeartbeatMs: 1000 },
      });
      await until(() => t.service.deps.link.status().Connected === true && plc.received.some((x) => x.type === 'SYNE'));
      const before = await storageSyncs();
      for (let i = 1; i <= 3; i++) expect((await assign(`S${i}`)).status).toBe(200);
      expect(await storageSyncs()).toBe(before + 3);
    });
  });

  it('counts attempts that never connected apart from connections lost, and reconnections', async () => {
    // A port with nobody listening yet: the link tries, and fails, a few times.
    const port = await freePort();
    plc = scriptedPlc(() => {}, 0);
    await plc.listening;
    t = await testService({ TestMode: false, Sorter: { Port: port, ReconnectMaxMs: 100, HeartbeatMs: 1000 } });
    await until(() => (t.service.deps.link.status().ConnectAttemptsFailed as number) >= 2);
    expect(t.service.deps.link.status()).toMatchObject({ Connected: false, Reconnects: 0, ConnectionsLost: 0 });
    plc.server.close();
    plc = scriptedPlc(() => {}, port);
    await plc.listening;
    await until(() => t.service.deps.link.status().Connected === true);
    expect(t.service.deps.link.status()).toMatchObject({ Reconnects: 0, ConnectionsLost: 0 });
    plc.drop();
    await until(() => t.service.deps.link.status().Reconnects === 1);
    expect(t.service.deps.link.status()).toMatchObject({ Connected: true, ConnectionsLost: 1 });
  });
});
