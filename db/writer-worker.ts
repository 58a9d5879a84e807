// The writer thread (db/writer.ts starts it): the one connection that writes the queue database
// (its work: db/writer-thread.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { WriterThread } from './writer-thread';
import type { WriterData } from './writer-protocol';
import { THREAD_NAMES, nameThisThread } from '../lib/host/thread-name';

// It keeps the process's priority (lib/main.ts lowers only the threads there before it starts): the sorter's ACKs wait for its commits.
nameThisThread(THREAD_NAMES.writer);

if (!parentPort) throw new Error('db/writer-worker.ts runs as a worker thread: db/writer.ts starts it');
const writer = WriterThread.open(parentPort, workerData as WriterData);
if (writer) writer.start();
else process.exit(1);
