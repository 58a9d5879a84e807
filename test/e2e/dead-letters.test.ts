// A client that never proves a read (it reads each response, then resets the connection) against
// the service as its own process: each message is handed out exactly MaxDeliveries times, then
// leaves its queue for the dead letters, logged once for that client; the service goes back to
// idle; an operator sends the dead letters back and a proving client drains them.
import fs from 'node:fs';
import { call } from '../helpers/http';
import { type FedService, startFedService } from '../helpers/fed-service';
import { RawConnection } from '../helpers/raw-http';
import { until } from '../helpers/until';

jest.setTimeout(60_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU seconds the process has used (user + system), from /proc. */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

describe('MaxDeliveries and the dead letters, from outside', () => {
  let s: FedService;
  afterEach(() => s.stop());

  it('a client that reads and resets: each message exactly MaxDeliveries times, then a dead letter; logged once; idle after', async () => {
    s = await startFedService(); // MaxDeliveries: the default, 10
    s.enqueue(5);
    const attempts = new Map<string, number[]>();
    for (let i = 0; i < 200; i++) {
      const c = new RawConnection(s.svc.port);
      const r = await c.request('GET', '/sortation?timeOut=0', { Connection: 'close' });
      c.socket.resetAndDestroy(); // read, then reset: no proof of the read, ever
      if (r.status === 204) break;
      const id = r.headers['x-message-id'] ?? '';
      attempts.set(id, [...(attempts.get(id) ?? []), Number(r.headers['x-delivery-attempt'])]);
      // The service has handled the reset before the next request: the message is back at the
      // head (or on its way to the dead letters), so a 204 means nothing is left to hand out.
      await until(async () => (await s.status()).Delivery.AwaitingProof === 0, 5000, 'the service handled the reset', 5);
    }
    const tenTimes = Array.from({ length: 10 }, (_, i) => i + 1);
    expect([...attempts.entries()]).toEqual(['1', '2', '3', '4', '5'].map((id) => [id, tenTimes]));

    const status = await s.settled();
    expect(status).toMatchObject({
      'Sortation Q': 0,
      DeadLetters: { 'Sortation Q': 5, 'Destination Q': 0 },
      Delivery: { DeadLettered: 5, Redelivered: 45 },
    });
    expect(s.db.prepare('SELECT message_id, attempts, last_client_address, last_return FROM dead_letters ORDER BY id').all()).toEqual(
      [1, 2, 3, 4, 5].map((id) => ({ message_id: id, attempts: 10, last_client_address: '127.0.0.1', last_return: 'Reset' })),
    );
    const warnings = await s.svc.logLine((l) => typeof l.msg === 'string' && l.msg.includes('closes connections without proof of read'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, client: '127.0.0.1', attempts: 10 });
    expect((await call(s.svc.base, 'GET', '/metrics')).text).toMatch(/^sorter_integration_dead_letters\{queue="sortation"\} 5$/m);

    // Nothing left to hand out again: the service idles (the redelivery loop is over).
    const before = cpuSeconds(s.svc.proc.pid!);
    await sleep(2000);
    expect(cpuSeconds(s.svc.proc.pid!) - before).toBeLessThan(0.2);

    // The operator sends them back; a client that proves its reads (curl-like: read, then close) takes each once.
    const requeued = await call(s.svc.base, 'POST', '/dead-letters/requeue', { All: true });
    expect(requeued.json).toMatchObject({ Requeued: 5 });
    const again: string[] = [];
    for (;;) {
      const c = new RawConnection(s.svc.port);
      const r = await c.request('GET', '/sortation?timeOut=0');
      c.destroy();
      if (r.status === 204) break;
      again.push(`${r.headers['x-message-id']}:${r.headers['x-delivery-attempt']}`);
    }
    expect(again).toEqual(['1:11', '2:11', '3:11', '4:11', '5:11']); // in their old places, marked as possible duplicates
    const after = await s.settled();
    expect(after).toMatchObject({ 'Sortation Q': 0, DeadLetters: { 'Sortation Q': 0 }, Delivery: { Returned: { Reset: 50 } } });
    expect(s.history().map((h) => h.attempt)).toEqual([11, 11, 11, 11, 11]);
  });
});
