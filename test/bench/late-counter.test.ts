// The memory step's minute-by-minute late count (bench/step.ts lateCounter): what the service's
// GET /status DecisionLatency.Late added between reads, read over real HTTP on loopback.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { lateCounter } from '../../bench/step';

const settle = () => new Promise((r) => setTimeout(r, 200));

it("gives what each interval added to the service's late count, and null where /status did not answer", async () => {
  // /status's Late since start, one value per GET; 'down' answers 500 with no JSON.
  const answers: Array<number | 'down'> = [2, 2, 7, 'down', 9, 9];
  const server = http.createServer((req, res) => {
    const next = answers.shift();
    if (req.url !== '/status' || next === undefined || next === 'down') return res.writeHead(500).end('no');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ DecisionLatency: { Late: next } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const counter = lateCounter(base); // reads the start: 2
    for (let i = 0; i < 5; i++) {
      await settle(); // one read at a time, as the minutes come
      counter.read();
    }
    await settle();
    // 2 → 2 → 7 → (down) → 9 → 9: the interval after the unanswered read has nothing to count from either.
    expect(counter.increments()).toEqual([0, 5, null, null, 0]);
  } finally {
    server.close();
  }
});
