// The stores as the service uses them (db/service-stores.ts), on a real file with the real writer
// thread: reads see what the writes committed once they resolve, and an outbox entry the storage
// cannot take in time is refused as a value (nothing written) rather than an exception.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from '../../db/sqlite';
import { openReader } from '../../db/connection';
import { serviceStores } from '../../db/service-stores';
import { Writer } from '../../db/writer';
import type { Db } from '../../db/connection';
import type { VerifyDto } from '../../model/messages';

const verify = (t: string): VerifyDto => ({ Type: 'VERIFY', TrackID: t, Barcode: '', Destination: 'D1', MessageCode: 212 });
const assignment = { kind: 'ASSIGNMENT' as const, body: { TrackID: 'T1', Destination: 'D1', Barcode: '' } };

let dir: string;
let writer: Writer;
let reader: Db;
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-stores-'));
  writer = await Writer.start({ file: path.join(dir, 'q.db'), synchronous: 'NORMAL', groupCommit: true });
  reader = openReader(path.join(dir, 'q.db'));
});
afterEach(async () => {
  reader.close();
  await writer.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('serviceStores', () => {
  it("reads on the main thread's connection see each write once it resolves", async () => {
    const stores = serviceStores(reader, writer);
    expect(await stores.queues.enqueue([verify('A'), verify('B')], '2026-01-01T00:00:00.000Z')).toEqual([1, 2]);
    expect(stores.queues.depth('sortation')).toBe(2);
    expect(
      await stores.queues.deliver(stores.queues.head('sortation', [])!, { deliveredAt: '2026-01-01T00:00:01.000Z', clientAddress: null }),
    ).toBe(true);
    expect([stores.queues.depth('sortation'), stores.history.size()]).toEqual([1, 1]);
    await stores.links.ensurePeerSession('PLC01', '2026-01-01T00:00:00.000Z');
    expect(stores.links.session('PLC01')).toMatchObject({ lastSeqIn: 0 });
  });

  it('an outbox entry: its id once written; a value saying why when the storage did not take it in time', async () => {
    const stores = serviceStores(reader, writer);
    expect(await stores.outbox.addToOutbox(assignment, '10.0.0.1', '2026-01-01T00:00:00.000Z')).toEqual({ written: true, value: 1 });
    const operator = new Database(path.join(dir, 'q.db'));
    operator.exec('BEGIN IMMEDIATE');
    try {
      const refused = await stores.outbox.addToOutbox(assignment, '10.0.0.1', '2026-01-01T00:00:01.000Z', { cancelAfterMs: 50 });
      expect(refused).toEqual({ written: false, reason: 'addToOutbox not written: the storage did not start it within 50 ms' });
    } finally {
      operator.exec('COMMIT');
      operator.close();
    }
    await writer.run('enqueue', [[verify('after')], 'T']); // the writer has moved past the lock
    expect(stores.outbox.depth()).toBe(1);
  });
});
