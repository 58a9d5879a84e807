// The Prometheus metrics (lib/ops/metrics.ts) scraped from their registry: one snapshot per
// scrape, each gauge and total from it under one prefix, absent ages left out, the storage state
// as one series per state, and the process metrics beside them.
import { type MetricsSnapshot, Metrics } from '../../../lib/ops/metrics';

const snapshot = (over: Partial<MetricsSnapshot> = {}): MetricsSnapshot => ({
  queues: {
    sortation: { ready: 3, unacked: 1, oldestAgeSeconds: 12.5, waitingClients: 2 },
    destination: { ready: 0, unacked: 0, oldestAgeSeconds: null, waitingClients: 0 },
  },
  outbox: { depth: 4, oldestAgeSeconds: null },
  link: {
    up: true,
    refusing: false,
    telegramsIn: 42,
    telegramsOut: 40,
    resends: 1,
    naksSent: 0,
    naksReceived: 2,
    duplicatesReceived: 0,
    reconnects: 3,
    connectionsLost: 3,
    connectAttemptsFailed: 5,
    droppedAssignments: 6,
    droppedSettings: 7,
  },
  storage: { state: 'Stalled', pendingWrites: 9, syncs: 15, ackedBeforeSync: 4, failures: 3 },
  requestsRemoved: { Superseded: 10, Expired: 11 },
  redelivered: 12,
  deadLetters: { sortation: 13, destination: 0 },
  deadLettered: 14,
  decisions: { awaiting: 16, late: 17 },
  ...over,
});

/** The scrape's samples as `name{labels} value` lines, without comments. */
const samples = async (m: Metrics) => (await m.registry.metrics()).split('\n').filter((l) => l && !l.startsWith('#'));

describe('Metrics', () => {
  it('reports the snapshot under one prefix: queues, outbox, link, storage and the running totals', async () => {
    const m = new Metrics(() => snapshot());
    const lines = await samples(m);
    for (const line of [
      'sorter_integration_queue_messages_ready{queue="sortation"} 3',
      'sorter_integration_queue_messages_ready{queue="destination"} 0',
      'sorter_integration_queue_messages_unacked{queue="sortation"} 1',
      'sorter_integration_queue_oldest_message_age_seconds{queue="sortation"} 12.5',
      'sorter_integration_queue_waiting_clients{queue="sortation"} 2',
      'sorter_integration_dead_letters{queue="sortation"} 13',
      'sorter_integration_outbox_messages 4',
      'sorter_integration_sorter_link_up 1',
      'sorter_integration_sorter_link_refusing 0',
      'sorter_integration_storage_pending_writes 9',
      'sorter_integration_storage_state{state="Ok"} 0',
      'sorter_integration_storage_state{state="Stalled"} 1',
      'sorter_integration_storage_state{state="Failing"} 0',
      'sorter_integration_up 1',
      'sorter_integration_telegrams_received_total 42',
      'sorter_integration_sorter_link_connect_failures_total 5',
      'sorter_integration_destination_settings_dropped_total 7',
      'sorter_integration_requests_expired_total 11',
      'sorter_integration_messages_redelivered_total 12',
      'sorter_integration_messages_dead_lettered_total 14',
      'sorter_integration_storage_syncs_total 15',
      'sorter_integration_storage_acked_before_sync_total 4',
      'sorter_integration_storage_failures_total 3',
      'sorter_integration_decisions_awaiting 16',
      'sorter_integration_decisions_late_total 17',
    ]) {
      expect(lines).toContain(line);
    }
    // The age of an empty queue's oldest message does not exist: left out, not 0.
    expect(lines.filter((l) => l.startsWith('sorter_integration_queue_oldest_message_age_seconds'))).toEqual([
      'sorter_integration_queue_oldest_message_age_seconds{queue="sortation"} 12.5',
    ]);
    expect(lines.some((l) => l.startsWith('sorter_integration_process_resident_memory_bytes '))).toBe(true);
    expect(lines.every((l) => l.startsWith('sorter_integration_'))).toBe(true);
  });

  it('says 0 for the age of the oldest outbox entry when the outbox is empty, as its help says', async () => {
    const lines = await samples(new Metrics(() => snapshot({ outbox: { depth: 0, oldestAgeSeconds: null } })));
    expect(lines.filter((l) => l.startsWith('sorter_integration_outbox_oldest_message_age_seconds'))).toEqual([
      'sorter_integration_outbox_oldest_message_age_seconds 0',
    ]);
    const help = (await new Metrics(() => snapshot()).registry.metrics())
      .split('\n')
      .find((l) => l.startsWith('# HELP sorter_integration_outbox_oldest_message_age_seconds'));
    expect(help).toMatch(/\(0 when empty\)$/);
  });

  it('takes one snapshot per scrape, a new one at the next, and counters follow it', async () => {
    let calls = 0;
    let telegramsIn = 1;
    const m = new Metrics(() => (calls++, snapshot({ link: { ...snapshot().link, telegramsIn } })));
    expect(await samples(m)).toContain('sorter_integration_telegrams_received_total 1');
    expect(calls).toBe(1);
    telegramsIn = 5;
    expect(await samples(m)).toContain('sorter_integration_telegrams_received_total 5');
    expect(calls).toBe(2);
  });

  it('the instruments the service updates as things happen appear once used', async () => {
    const m = new Metrics(() => snapshot());
    m.emptyReceives.inc({ queue: 'destination' });
    m.httpDuration.observe({ route: '/status', method: 'GET', status: '200' }, 0.003);
    const lines = await samples(m);
    expect(lines).toContain('sorter_integration_empty_receives_total{queue="destination"} 1');
    expect(lines).toContain(
      'sorter_integration_http_request_duration_seconds_bucket{le="0.005",route="/status",method="GET",status="200"} 1',
    );
    expect(lines).toContain(
      'sorter_integration_http_request_duration_seconds_bucket{le="0.0025",route="/status",method="GET",status="200"} 0',
    );
  });
});

describe('Metrics: the disk and the history bounds', () => {
  const disk = {
    files: { database: 3e9, wal: 16e6, trafficLog: 60e6 },
    boundBytes: 12.8e9,
    freeBytes: 2e9,
    sizeBytes: 32e9,
    low: true,
    historyBytesPerDay: 1.4e9,
    historyDaysFit: 9.05,
    retentionCut: true,
    cutRows: 1234,
    cuts: 3,
  };

  it('reports the files the bound counts, the bound, the disk, Low, the projection and the cuts', async () => {
    const lines = await samples(new Metrics(() => snapshot({ disk })));
    for (const line of [
      'sorter_integration_storage_files_bytes{file="database"} 3000000000',
      'sorter_integration_storage_files_bytes{file="wal"} 16000000',
      'sorter_integration_storage_files_bytes{file="traffic_log"} 60000000',
      'sorter_integration_storage_bound_bytes 12800000000',
      'sorter_integration_disk_free_bytes 2000000000',
      'sorter_integration_disk_size_bytes 32000000000',
      'sorter_integration_disk_low 1',
      'sorter_integration_history_bytes_per_day 1400000000',
      'sorter_integration_history_fit_seconds 781920',
      'sorter_integration_history_retention_cut 1',
      'sorter_integration_history_size_cuts_total 3',
      'sorter_integration_history_size_cut_rows_total 1234',
    ]) {
      expect(lines).toContain(line);
    }
  });

  it('says NaN for a figure not known (a history too short to project, a file system not measured), not 0', async () => {
    const lines = await samples(
      new Metrics(() => snapshot({ disk: { ...disk, historyDaysFit: null, historyBytesPerDay: null, freeBytes: null, low: false } })),
    );
    expect(lines.filter((l) => /_history_fit_seconds|_history_bytes_per_day|_disk_free_bytes/.test(l))).toEqual([
      'sorter_integration_disk_free_bytes Nan',
      'sorter_integration_history_bytes_per_day Nan',
      'sorter_integration_history_fit_seconds Nan',
    ]); // prom-client's spelling; Prometheus reads it as NaN
    expect(lines).toContain('sorter_integration_disk_low 0');
  });
});
