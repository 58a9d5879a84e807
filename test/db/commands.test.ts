// The writer's commands (db/commands.ts) on a real SQLite file: each runs by its name as the
// writer thread runs it, the checkpoint is the one run between transactions, and every command
// inside a transaction has its durability decided.
import { durable, isDurable, isOutsideTransaction, outsideTransactionCommands, writeCommands } from '../../db/commands';
import { queueReads } from '../../db/queue-reads';
import type { VerifyDto } from '../../model/messages';
import { freshDb } from '../helpers/db';

const verify = (t: string): VerifyDto => ({ Type: 'VERIFY', TrackID: t, Barcode: '', Destination: 'D1', MessageCode: 212 });

let ctx: ReturnType<typeof freshDb>;
beforeEach(() => (ctx = freshDb()));
afterEach(() => ctx.dispose());

describe('writeCommands', () => {
  it('runs the writes by name: messages queued, one delivered into the history, the queues cleared', () => {
    const commands = writeCommands(ctx.db);
    const reads = queueReads(ctx.db);
    expect(commands.enqueue([verify('A'), verify('B')], '2026-01-01T00:00:00.000Z')).toEqual([1, 2]);
    expect(
      commands.deliver(reads.head('sortation', [])!, {
        deliveredAt: '2026-01-01T00:00:01.000Z',
        clientAddress: '10.0.0.1',
        attempt: 1,
        readProof: 'ClientClose',
      }),
    ).toBe(true);
    expect(ctx.db.prepare('SELECT track_id, client_address, read_proof FROM delivered_history').all()).toEqual([
      { track_id: 'A', client_address: '10.0.0.1', read_proof: 'ClientClose' },
    ]);
    commands.clearQueues();
    expect(reads.depth('sortation')).toBe(0);
  });

  it('every command run inside a transaction has its durability decided; the checkpoint is the one run between them', () => {
    expect(Object.keys(durable).sort()).toEqual(Object.keys(writeCommands(ctx.db)).sort());
    expect(Object.keys(outsideTransactionCommands(ctx.db))).toEqual(['checkpoint']);
    expect(isOutsideTransaction('checkpoint')).toBe(true);
    expect(Object.keys(durable).some((op) => isOutsideTransaction(op as keyof typeof durable))).toBe(false);
  });

  it('what the service answers for is synced: a sorter telegram, a POST, an operator requeue; housekeeping is not', () => {
    expect(['acceptFromPeer', 'addToOutbox', 'requeueDeadLetters'].map((op) => isDurable(op as never))).toEqual([true, true, true]);
    expect(['deliver', 'removeFromOutbox', 'purgeHistory', 'expireRequests', 'checkpoint'].map((op) => isDurable(op as never))).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('the checkpoint runs outside a transaction and folds the WAL back', () => {
    writeCommands(ctx.db).enqueue([verify('A')], 'T');
    const result = outsideTransactionCommands(ctx.db).checkpoint('RESTART');
    expect(result.busy).toBe(false);
    expect(result.checkpointed).toBe(result.walFrames);
    expect(result.walFrames).toBeGreaterThan(0);
  });
});
