// The link store: the sorter's messages committed with their sequence numbers, and the sessions.
import { createLinkStore } from '../../db/link-store';
import { createOutboxStore } from '../../db/outbox-store';
import { createQueueStore } from '../../db/queue-store';
import { freshDb } from '../helpers/db';
import { nth } from '../helpers/nth';

describe('link store', () => {
  it('commits a message with its sequence number, and keeps one stable epoch of ours', () => {
    const ctx = freshDb();
    const links = createLinkStore(ctx.db, createQueueStore(ctx.db));
    expect(links.session('PLC01')).toBeUndefined();
    const first = links.ensurePeerSession('PLC01', 'T');
    expect(first).toMatchObject({ peerEpoch: null, lastSeqIn: 0 });
    expect(first.ourEpoch).toMatch(/^[0-9A-F]{12}$/);
    expect(links.ensurePeerSession('PLC01', 'T')).toEqual(first);
    const verify = { Type: 'VERIFY', TrackID: '1', Barcode: '', Destination: 'D1', MessageCode: 212 } as const;
    links.acceptFromPeer('PLC01', 17, 0, verify, 'T');
    expect(links.session('PLC01')).toEqual({ ...first, lastSeqIn: 17 });
    links.setPeerSession('PLC01', 'ABC', 0, 'T');
    expect(links.session('PLC01')).toEqual({ ourEpoch: first.ourEpoch, peerEpoch: 'ABC', lastSeqIn: 0 });
    ctx.dispose();
  });

  it('refuses a message whose predecessor was not stored: no gap for a later repeat to cover', () => {
    const ctx = freshDb();
    const queues = createQueueStore(ctx.db);
    const links = createLinkStore(ctx.db, queues);
    links.ensurePeerSession('PLC01', 'T');
    const verify = { Type: 'VERIFY', TrackID: '1', Barcode: '', Destination: 'D1', MessageCode: 212 } as const;
    links.acceptFromPeer('PLC01', 1, 0, verify, 'T');
    expect(() => links.acceptFromPeer('PLC01', 3, 2, verify, 'T')).toThrow(
      /telegram 3 from PLC01 out of sequence: expected the last stored number to be 2, it is 1/,
    );
    expect(queues.depth('sortation')).toBe(1); // the refused message was not queued either
    expect(links.session('PLC01')!.lastSeqIn).toBe(1);
    ctx.dispose();
  });

  it('an entry settled gets its outbox_history row then: dropped with its reason, or acknowledged; none while it waits', () => {
    const ctx = freshDb();
    const outbox = createOutboxStore(ctx.db);
    const links = createLinkStore(ctx.db, createQueueStore(ctx.db));
    const history = () =>
      ctx.db.prepare('SELECT outbox_id, track_id, barcode, client_address, fate, reason FROM outbox_history ORDER BY outbox_id').all();
    const late = outbox.addToOutbox({ kind: 'ASSIGNMENT', body: { TrackID: 'L', Barcode: 'BL', Destination: 'D1' } }, '10.0.0.7', 'T0');
    const acked = outbox.addToOutbox({ kind: 'ASSIGNMENT', body: { TrackID: 'A', Barcode: 'BA', Destination: 'D2' } }, '10.0.0.7', 'T1');
    expect(history()).toEqual([]);
    links.dropFromOutbox(nth(outbox.peek(1), 0), 'time to live passed', 'T9');
    outbox.removeFromOutbox(acked);
    expect(history()).toEqual([
      { outbox_id: late, track_id: 'L', barcode: 'BL', client_address: '10.0.0.7', fate: 'Dropped', reason: 'time to live passed' },
      { outbox_id: acked, track_id: 'A', barcode: 'BA', client_address: '10.0.0.7', fate: 'Acknowledged', reason: null },
    ]);
    expect(outbox.depth()).toBe(0);
    ctx.dispose();
  });
});
