// The sorter link's durable state: sessions per peer, messages committed with their sequence
// numbers, dropped entries.
import crypto from 'node:crypto';
import type { Db } from './connection';
import type { QueueWrites } from './queue-writes';
import type { OutboxEntry } from './outbox-store';
import type { SorterMessage } from '../model/messages';

/** A message from the peer, committed: its queue id, and how many older REQUESTs it superseded. */
export interface Accepted {
  id: number;
  superseded: number;
}

/** What the link remembers about one peer across restarts. */
export interface PeerSession {
  /** The peer's session id from its last SYNS, null before the first one. */
  peerEpoch: string | null;
  /** Last data sequence number accepted from the peer in that session (0 = none). */
  lastSeqIn: number;
  /** Our own session id: stays the same across our restarts, as our outbox does. */
  ourEpoch: string;
}

/** Reading the durable link state (migration 002). */
export interface LinkReads {
  /** The session with a peer, if it was ever created (LinkWrites.ensurePeerSession). */
  session(peer: string): PeerSession | undefined;
  /** Entries ever dropped, of one kind (kept as they are dropped: outbox_dropped loses its rows with the history). */
  droppedCount(kind: 'ASSIGNMENT' | 'DESTINATION'): number;
}

/** Writing the durable link state (writer thread). */
export interface LinkWrites {
  /** The session with a peer, created with a fresh epoch of ours on first use. */
  ensurePeerSession(peer: string, at: string): PeerSession;
  /** The peer announced a session (SYNS); a new epoch restarts its numbering after `lastSeqIn`. */
  setPeerSession(peer: string, epoch: string, lastSeqIn: number, at: string): void;
  /**
   * Commit a message from the peer with its sequence number, in one transaction, only if the
   * last number stored is `after` (the one before it): a message whose predecessor was not
   * stored fails too, so no gap can be papered over by a later repeat. Returns the queue id.
   * `after` null: the peer's numbering starts again here, whatever was stored (a layout without
   * resynchronisation, the first telegram of a connection).
   */
  /**
   * `dropSuperseded`: a REQUEST takes the older REQUESTs of its item out of the queue (live mode).
   * `id`: the queue id given it on arrival (lib/queue/dispatcher.ts, UncommittedMessages: it may be handed out under
   * it before this commit); null takes the next.
   */
  acceptFromPeer(
    peer: string,
    seq: number,
    after: number | null,
    message: SorterMessage,
    at: string,
    dropSuperseded?: boolean,
    id?: number | null,
  ): Accepted;
  /** Move an outbox entry the sorter can no longer use to outbox_dropped, with the reason. */
  dropFromOutbox(entry: OutboxEntry, reason: string, at: string): void;
}

/** Both, on one connection (tests, tools). */
export type LinkStore = LinkReads & LinkWrites;

interface SessionRow {
  peer_epoch: string | null;
  last_seq_in: number;
  our_epoch: string;
}
const toSession = (row: SessionRow): PeerSession => ({ peerEpoch: row.peer_epoch, lastSeqIn: row.last_seq_in, ourEpoch: row.our_epoch });

/** The link reads on an open, migrated database. */
export function linkReads(db: Db): LinkReads {
  const select = db.prepare<[string], SessionRow>('SELECT peer_epoch, last_seq_in, our_epoch FROM link_state WHERE peer = ?');
  // Kept by a trigger as entries are dropped (migrations/015): counting outbox_dropped walked it.
  const dropped = db.prepare<[string], number>('SELECT n FROM outbox_dropped_counts WHERE kind = ?').pluck();
  return {
    session(peer) {
      const row = select.get(peer);
      return row && toSession(row);
    },
    droppedCount: (kind) => dropped.get(kind) ?? 0,
  };
}

/** An outbox entry the sorter cannot use: out of the outbox, into outbox_dropped, in one transaction. */
function outboxDrop(db: Db) {
  // A repeated drop (after a resync) updates the row: it is not counted again (migrations/015).
  const insertDropped = db.prepare(`INSERT INTO outbox_dropped (id, kind, track_id, destination, created_at, dropped_at, reason)
    VALUES (@id, @kind, @track_id, @destination, @created_at, @dropped_at, @reason)
    ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, track_id = excluded.track_id, destination = excluded.destination,
      created_at = excluded.created_at, dropped_at = excluded.dropped_at, reason = excluded.reason`);
  const deleteOutbox = db.prepare('DELETE FROM outbox WHERE id = ?');
  return db.transaction((entry: OutboxEntry, reason: string, at: string) => {
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
}

/** The link writes on an open, migrated database; `queues` are the queue writes on the same one. */
export function linkWrites(db: Db, queues: QueueWrites): LinkWrites {
  const select = db.prepare<[string], SessionRow>('SELECT peer_epoch, last_seq_in, our_epoch FROM link_state WHERE peer = ?');
  const insert = db.prepare('INSERT OR IGNORE INTO link_state (peer, our_epoch, updated_at) VALUES (?, ?, ?)');
  const setSession = db.prepare('UPDATE link_state SET peer_epoch = ?, last_seq_in = ?, updated_at = ? WHERE peer = ?');
  // `@after` NULL: any stored number (the peer's numbering taken as it comes).
  const setLastIn = db.prepare(
    'UPDATE link_state SET last_seq_in = @seq, updated_at = @at WHERE peer = @peer AND (@after IS NULL OR last_seq_in = @after)',
  );

  const ensurePeerSession = (peer: string, at: string): PeerSession => {
    insert.run(peer, crypto.randomBytes(6).toString('hex').toUpperCase(), at);
    const row = select.get(peer);
    if (!row) throw new Error(`no link_state row for ${peer} after inserting it`);
    return toSession(row);
  };

  const acceptFromPeer = db.transaction(
    (
      peer: string,
      seq: number,
      after: number | null,
      message: SorterMessage,
      at: string,
      dropSuperseded = false,
      given: number | null = null,
    ): Accepted => {
      if (setLastIn.run({ seq, at, peer, after }).changes === 0) {
        const stored = select.get(peer)?.last_seq_in;
        throw new Error(
          `telegram ${seq} from ${peer} out of sequence: expected the last stored number to be ${after}, it is ${stored ?? 'missing'}`,
        );
      }
      const [id] = queues.enqueue([message], at, [given]);
      if (id === undefined) throw new Error('enqueue returned no id for the message');
      // A newer REQUEST for the item: the older ones can no longer be used by anybody.
      const superseded = dropSuperseded && message.Type === 'REQUEST' ? queues.supersedeRequests(message.TrackID, id, at) : 0;
      return { id, superseded };
    },
  );

  const dropFromOutbox = outboxDrop(db);

  const setPeerSession = db.transaction((peer: string, epoch: string, lastSeqIn: number, at: string) => {
    ensurePeerSession(peer, at);
    setSession.run(epoch, lastSeqIn, at, peer);
  });

  return {
    ensurePeerSession,
    setPeerSession: (peer, epoch, lastSeqIn, at) => setPeerSession.immediate(peer, epoch, lastSeqIn, at),
    acceptFromPeer: (peer, seq, after, message, at, dropSuperseded, id) =>
      acceptFromPeer.immediate(peer, seq, after, message, at, dropSuperseded, id),
    dropFromOutbox: (entry, reason, at) => dropFromOutbox.immediate(entry, reason, at),
  };
}

/** Reads and writes on one connection, synchronously (tests, tools). */
export function createLinkStore(db: Db, queues: QueueWrites): LinkStore {
  return { ...linkReads(db), ...linkWrites(db, queues) };
}
