// The queue tables read and written on one connection, synchronously: for tests, the benchmark
// and tools. The service splits the two over its threads (db/service-stores.ts).
import type { Db } from './connection';
import { type QueueReads, queueReads } from './queue-reads';
import { type QueueWrites, queueWrites } from './queue-writes';

/** The queue reads and writes together, on one connection. */
export type QueueStore = QueueReads & QueueWrites;

/** Reads and writes on one connection, synchronously (tests, benchmark, tools). */
export function createQueueStore(db: Db): QueueStore {
  return { ...queueReads(db), ...queueWrites(db) };
}
