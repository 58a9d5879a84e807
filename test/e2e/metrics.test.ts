// GET /metrics as operators use it: a real Prometheus (Debian's package, started here on
// loopback) scrapes the live service, with an API key sent as a bearer token, while the
// emulator and the reference client run; the assertions go through Prometheus' query API.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { runWcsClient } from '../../examples/wcs-client';
import { startEmulator } from '../helpers/emulator';
import { freePort } from '../helpers/net';
import { removeHome, tempHome } from '../helpers/home';
import { startServiceProcess } from '../helpers/process';
import { call, drain } from '../helpers/http';
import { itWhen, missingCommands } from '../helpers/tools';
import { until } from '../helpers/until';
import { killAtFileEnd } from '../helpers/children';

jest.setTimeout(90_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('metrics scraped by Prometheus', () => {
  let home: string;
  let prometheus: ChildProcess | undefined;
  afterEach(() => {
    prometheus?.kill('SIGKILL');
    removeHome(home);
  });

  itWhen(missingCommands({ prometheus: 'apt-get install prometheus' }), 'metrics scraped by Prometheus')(
    'queues, link, messages, latencies, storage and process metrics arrive in Prometheus under one prefix',
    async () => {
      const emu = await startEmulator(['--port', '0', '--rate', '20', '--seed', '9', '--heartbeat-ms', '300', '--ack-timeout-ms', '300']);
      home = tempHome({
        'config.json': {
          TestMode: false,
          Port: 0,
          Host: '127.0.0.1',
          ApiKeys: ['scrape-key'],
          Sorter: { Host: '127.0.0.1', Port: emu.port, HeartbeatMs: 300 },
        },
      });
      const svc = await startServiceProcess(home);
      const client = runWcsClient({ base: svc.base, loops: 2, timeOut: 1, apiKey: 'scrape-key' });

      const promPort = await freePort();
      const dir = path.join(home, 'prometheus');
      fs.mkdirSync(dir);
      fs.writeFileSync(
        path.join(dir, 'prometheus.yml'),
        [
          'global: { scrape_interval: 1s, evaluation_interval: 1s }',
          'scrape_configs:',
          '  - job_name: sorter',
          '    authorization: { type: Bearer, credentials: scrape-key }',
          `    static_configs: [ { targets: ["127.0.0.1:${svc.port}"] } ]`,
          '',
        ].join('\n'),
      );
      prometheus = spawn(
        'prometheus',
        [
          `--config.file=${path.join(dir, 'prometheus.yml')}`,
          `--storage.tsdb.path=${path.join(dir, 'data')}`,
          `--web.listen-address=127.0.0.1:${promPort}`,
        ],
        { stdio: 'ignore' },
      );
      killAtFileEnd(prometheus);
      const query = async (q: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> => {
        try {
          const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(q)}`);
          const body = (await res.json()) as {
            status: string;
            data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
          };
          return body.status === 'success' ? body.data.result : [];
        } catch {
          return []; // not up yet
        }
      };
      const value = async (q: string) => Number((await query(q))[0]?.value[1] ?? NaN);
      // Wait until Prometheus has scraped the service a few times with traffic flowing.
      for (let i = 0; i < 60 && !((await value('sorter_integration_messages_received_total{queue="sortation",type="REQUEST"}')) > 20); i++)
        await sleep(500);

      expect(await value('up{job="sorter"}')).toBe(1);
      expect(await value('sorter_integration_up')).toBe(1);
      expect(await value('sorter_integration_sorter_link_up')).toBe(1);
      expect(await value('sorter_integration_messages_received_total{queue="sortation",type="REQUEST"}')).toBeGreaterThan(20);
      expect(await value('sum(sorter_integration_messages_delivered_total{queue="sortation"})')).toBeGreaterThan(0);
      expect(await value('sorter_integration_telegrams_received_total')).toBeGreaterThan(0);
      expect(await value('sorter_integration_telegrams_sent_total')).toBeGreaterThan(0);
      expect((await query('sorter_integration_queue_messages_ready')).map((r) => r.metric.queue).sort()).toEqual([
        'destination',
        'sortation',
      ]);
      expect(await value('sorter_integration_decision_latency_seconds_count')).toBeGreaterThan(0);
      // Both scraped (a missing series reads NaN); the late count is whatever this machine's load made it.
      expect(await value('sorter_integration_decisions_awaiting')).toBeGreaterThanOrEqual(0);
      expect(await value('sorter_integration_decisions_late_total')).toBeGreaterThanOrEqual(0);
      expect(await value('sorter_integration_storage_commit_writes_count')).toBeGreaterThan(0);
      expect(await value('sorter_integration_storage_write_duration_seconds_count')).toBeGreaterThan(0);
      expect(await value('sorter_integration_storage_state{state="Ok"}')).toBe(1);
      expect(
        await value('sum(sorter_integration_http_request_duration_seconds_count{route="/sortation",method="POST",status="200"})'),
      ).toBeGreaterThan(0);
      expect(await value('sorter_integration_process_resident_memory_bytes')).toBeGreaterThan(10e6);
      // A histogram Prometheus can compute with: the p99 of the decision latency over the run.
      expect(await value('histogram_quantile(0.99, sum by (le) (sorter_integration_decision_latency_seconds_bucket))')).toBeLessThan(1.5);

      // The waiting clients: none once the client has stopped and the queue is empty, then exactly
      // the long polls the test holds open, then none again once they have given up.
      await client.stop();
      await emu.stop();
      await drain(svc.base, 'sortation', { 'x-api-key': 'scrape-key' });
      const waiting = 'sorter_integration_queue_waiting_clients{queue="sortation"}';
      await until(async () => (await value(waiting)) === 0, 10_000, 'no waiting client shown', 250);
      const polls = new AbortController();
      const held = Array.from({ length: 3 }, () =>
        call(svc.base, 'GET', '/sortation?timeOut=30', undefined, { 'x-api-key': 'scrape-key' }, polls.signal).catch(() => 'aborted'),
      );
      await until(async () => (await value(waiting)) === 3, 10_000, 'the three long polls shown', 250);
      polls.abort();
      expect(await Promise.all(held)).toEqual(['aborted', 'aborted', 'aborted']);
      await until(async () => (await value(waiting)) === 0, 10_000, 'no waiting client shown after the polls gave up', 250);

      expect(await svc.stop()).toBe(0);
    },
  );
});
