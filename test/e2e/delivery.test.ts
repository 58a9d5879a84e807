// Deliveries end to end over real HTTP: long polls, disconnects and the delivery tracker with a
// live service.
import type { InductDto } from '../../model/messages';
import { poll } from '../helpers/poll';
import { type TestService, testService } from '../helpers/service';
import { nth } from '../helpers/nth';

const induct = (n: number): InductDto => ({
  Type: 'REQUEST',
  TrackID: String(n).padStart(7, '0'),
  Barcode: `B${n}`,
  MessageCode: 210,
  InductLocation: 'IND01',
  RecirculationCount: 0,
  Length: 1,
  Width: 1,
  Height: 1,
  Weight: 1,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
jest.setTimeout(60000);

/** A deterministic pseudo-random sequence, so a failure can be replayed. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

describe('delivery over real HTTP on loopback', () => {
  let t: TestService;
  let port: number;
  beforeEach(async () => {
    t = await testService({ TestMode: false, Host: '127.0.0.1', Port: 0 });
    await t.server.start();
    port = t.server.info.port as number;
  });
  afterEach(() => t.close());

  it('many long polls aborted at random moments while messages arrive: every message is received exactly once', async () => {
    const random = rng(20261121);
    const total = 300;
    const received: string[] = [];
    let stop = false;
    let aborts = 0;
    // No quiet window: quitters leave at any moment, also just as their message is written.

    const stayer = async () => {
      while (!stop) {
        const r = await poll(port, '/sortation?timeOut=1');
        if (r !== 'aborted' && r.status === 210) received.push(JSON.parse(r.body).TrackID);
      }
    };
    const quitter = async () => {
      while (!stop) {
        const r = await poll(port, '/sortation?timeOut=5', Math.floor(random() * 40));
        if (r === 'aborted') aborts += 1;
        else if (r.status === 210) received.push(JSON.parse(r.body).TrackID);
      }
    };
    const clients = [...Array.from({ length: 4 }, stayer), ...Array.from({ length: 8 }, quitter)];

    for (let n = 1; n <= total;) {
      const batch = Math.min(1 + Math.floor(random() * 4), total - n + 1);
      await t.publish(Array.from({ length: batch }, (_, i) => induct(n + i)));
      n += batch;
      await sleep(60 + Math.floor(random() * 40));
    }
    // Wait while messages keep arriving (a slow machine is slower, not wrong); stop when all came or none for 5 s.
    for (let seen = received.length, since = Date.now(); received.length < total && Date.now() - since < 5000; await sleep(20)) {
      if (received.length > seen) [seen, since] = [received.length, Date.now()];
    }
    stop = true;
    await Promise.all(clients);
    await t.settled();

    expect(aborts).toBeGreaterThan(100);
    expect(new Set(received).size).toBe(received.length); // nothing twice
    expect(received.length).toBe(total); // nothing lost
    expect(t.service.deps.store.depth('sortation')).toBe(0);
    expect(t.service.db.prepare('SELECT count(*) FROM delivered_history').pluck().get()).toBe(total);
  });

  it('a client that disconnects while waiting leaves the next message at the head for the next client', async () => {
    const gone = await poll(port, '/sortation?timeOut=10', 100);
    expect(gone).toBe('aborted');
    for (let i = 0; i < 100 && t.service.deps.dispatchers.sortation.waiting > 0; i++) await sleep(10);
    expect(t.service.deps.dispatchers.sortation.waiting).toBe(0);
    await t.publish([induct(1)]);
    const next = await poll(port, '/sortation?timeOut=0');
    expect(next).toMatchObject({ status: 210 });
  });

  it('a client that reads its message and closes at once keeps it (no duplicate)', async () => {
    await t.publish([induct(1), induct(2)]);
    const first = await poll(port, '/sortation?timeOut=0');
    const second = await poll(port, '/sortation?timeOut=0');
    await t.settled();
    expect([first, second].map((r) => r !== 'aborted' && JSON.parse(r.body).TrackID)).toEqual(['0000001', '0000002']);
    expect(await poll(port, '/sortation?timeOut=0')).toMatchObject({ status: 204 });
  });

  it('competing consumers: each message goes to exactly one of them, each sees the queue order', async () => {
    const total = 400;
    const perConsumer: number[][] = [[], [], [], []];
    let stop = false;
    const consumer = async (i: number) => {
      while (!stop) {
        const r = await poll(port, '/sortation?timeOut=1');
        if (r !== 'aborted' && r.status === 210) nth(perConsumer, i).push(Number(JSON.parse(r.body).TrackID));
      }
    };
    const running = perConsumer.map((_, i) => consumer(i));
    for (let n = 1; n <= total; n += 20) {
      await t.publish(Array.from({ length: 20 }, (_, i) => induct(n + i)));
      await sleep(5);
    }
    const count = () => perConsumer.reduce((s, c) => s + c.length, 0);
    for (let i = 0; i < 300 && count() < total; i++) await sleep(20);
    stop = true;
    await Promise.all(running);

    const all = perConsumer.flat().sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    for (const seen of perConsumer) {
      expect(seen.length).toBeGreaterThan(0);
      expect(seen).toEqual([...seen].sort((a, b) => a - b)); // FIFO as each consumer sees it
    }
  });
});
