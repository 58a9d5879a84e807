import crypto from 'node:crypto';
import type { Db } from './connection';
import type { QueueStore } from './queue-store';
import type { OutboxEntry } from './outbox-store';
import type { SorterMessage } from '../lib/messages';

/** What the link remembers about one peer across restarts. */
export interface PeerSession {
  /** The peer's session id from its last SYNS, null before the first one. */
  peerEpoch: string | null;
  /** Last data sequence number accepted from the peer in that session (0 = none). */
  lastSeqIn: number;
  /** Our own session id: stays the same across our restarts, as our outbox does. */
  ourEpoch: string;
}

/** Durable link state (migration 002). */
export interface LinkStore {
  /** The session with a peer; created with a fresh epoch of ours on first use. */
  session(peer: string): PeerSession;
  /** The peer announced a session (SYNS); a new epoch restarts its numbering after `lastSeqIn`. */
  setPeerSession(peer: string, epoch: string, lastSeqIn: number, at: string): void;
  /** Commit a message from the peer and its sequence number in one transaction. */
  accept(peer: string, seq: number, message: SorterMessage, at: string): number;
  /** Move an outbox entry the sorter can no longer use to outbox_dropped, with the reason. */
  drop(entry: OutboxEntry, reason: string, at: string): void;
  /** Entries ever dropped, of one kind. */
  droppedCount(kind: 'ASSIGNMENT' | 'DESTINATION'): number;
}

/** Build the link store; `queues` is the queue store on the same database. */
export function createLinkStore(db: Db, queues: QueueStore): LinkStore {
  const select = db.prepare('SELECT peer_epoch, last_seq_in, our_epoch FROM link_state WHERE peer = ?');
  const insert = db.prepare('INSERT INTO link_state (peer, our_epoch, updated_at) VALUES (?, ?, ?)');
  const setSession = db.prepare('UPDATE link_state SET peer_epoch = ?, last_seq_in = ?, updated_at = ? WHERE peer = ?');
  const setLastIn = db.prepare('UPDATE link_state SET last_seq_in = ?, updated_at = ? WHERE peer = ?');
  const insertDropped = db.prepare(`INSERT OR REPLACE INTO outbox_dropped (id, kind, track_id, destination, created_at, dropped_at, reason)
    VALUES (@id, @kind, @track_id, @destination, @created_at, @dropped_at, @reason)`);
  const deleteOutbox = db.prepare('DELETE FROM outbox WHERE id = ?');
  const dropped = db.prepare('SELECT count(*) FROM outbox_dropped WHERE kind = ?').pluck();

  const session = (peer: string): PeerSession => {
    let row = select.get(peer) as { peer_epoch: string | null; last_seq_in: number; our_epoch: string } | undefined;
    if (!row) {
      insert.run(peer, crypto.randomBytes(6).toString('hex').toUpperCase(), new Date().toISOString());
      row = select.get(peer) as { peer_epoch: string | null; last_seq_in: number; our_epoch: string };
    }
    return { peerEpoch: row.peer_epoch, lastSeqIn: row.last_seq_in, ourEpoch: row.our_epoch };
  };

  const accept = db.transaction((peer: string, seq: number, message: SorterMessage, at: string): number => {
    const [id] = queues.enqueue([message], at);
    setLastIn.run(seq, at, peer);
    return id;
  });

  const drop = db.transaction((entry: OutboxEntry, reason: string, at: string) => {
    const m = entry.message;
    insertDropped.run({
      id: entry.id,
      kind: m.kind,
      track_id: m.kind === 'ASSIGNMENT' ? m.body.TrackID : null,
      destination: m.body.Destination,
      created_at: entry.createdAt,
      dropped_at: at,
      reason,
    });
    deleteOutbox.run(entry.id);
  });

  return {
    session,
    setPeerSession: (peer, epoch, lastSeqIn, at) => {
      session(peer);
      setSession.run(epoch, lastSeqIn, at, peer);
    },
    accept: (peer, seq, message, at) => accept.immediate(peer, seq, message, at),
    drop: (entry, reason, at) => drop.immediate(entry, reason, at),
    droppedCount: (kind) => dropped.get(kind) as number,
  };
}
