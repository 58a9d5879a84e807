// Test helper: the service as its own process in live mode (no sorter reachable), its queues fed
// by another connection to its database, as the sorter link or an operator would commit them.
import path from 'node:path';
import Database from '../../db/sqlite';
import { createQueueStore } from '../../db/queue-store';
import type { SorterMessage, VerifyDto } from '../../model/messages';
import { call, settled } from './http';
import { removeHome, tempHome } from './home';
import { type ServiceProcess, startServiceProcess } from './process';
import type { Json } from './http';

/** A running service whose queues the test fills from outside. */
export interface FedService {
  svc: ServiceProcess;
  db: Database.Database;
  home: string;
  /** Commit `n` VERIFYs (TrackIDs numbered from `from`) to the sortation queue. */
  enqueue(n: number, from?: number): void;
  /** Commit these messages, in order. */
  enqueueMessages(messages: SorterMessage[]): void;
  status(): Promise<Json>;
  /** Wait until no response is awaiting proof (at most `ms`), then return the status. */
  settled(ms?: number): Promise<Json>;
  history(): Array<{ track_id: string; attempt: number; read_proof: string }>;
  stop(): Promise<void>;
}

/** A VERIFY for TrackID n (seven digits). */
export const verify = (n: number): VerifyDto => ({
  Type: 'VERIFY',
  TrackID: String(n).padStart(7, '0'),
  Barcode: `B${n}`,
  Destination: 'D001',
  MessageCode: 212,
});

/** Start the service on a fresh home; `config` overrides the defaults of config.json. */
export async function startFedService(config: object = {}): Promise<FedService> {
  const home = tempHome({
    'config.json': { TestMode: false, Port: 0, Host: '127.0.0.1', ExternalChangePollMs: 10, Sorter: { Port: 1 }, ...config },
  });
  const svc = await startServiceProcess(home);
  const db = new Database(path.join(home, 'data/sorter.db'));
  db.pragma('busy_timeout = 5000');
  const store = createQueueStore(db);
  const status = async () => (await call(svc.base, 'GET', '/status')).json;
  return {
    svc,
    db,
    home,
    enqueue: (n, from = 1) =>
      void store.enqueue(
        Array.from({ length: n }, (_, i) => verify(from + i)),
        new Date().toISOString(),
      ),
    enqueueMessages: (messages) => void store.enqueue(messages, new Date().toISOString()),
    status,
    settled: (ms = 6000) => settled(svc.base, ms),
    history: () => db.prepare('SELECT track_id, attempt, read_proof FROM delivered_history ORDER BY id').all() as never,
    async stop() {
      db.close();
      await svc.stop();
      removeHome(home);
    },
  };
}
