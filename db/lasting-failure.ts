// Which failed writes would fail again however often they are retried: the writer thread answers
// a failed command with its reason as text (db/writer-thread.ts), so they are told by that text.

/**
 * SQLite's codes for a statement the database will never take as it is: a table or column that
 * is not there (a schema older or newer than this service), a value of the wrong type, a corrupt
 * file, a value a NOT NULL or CHECK refuses. A full disk, a lock or an I/O error may pass, and a
 * duplicate id is given afresh on the retry (lib/queue/dispatcher.ts, UncommittedMessages), so those are not here.
 */
const LASTING = /\bSQLITE_(ERROR|MISMATCH|CORRUPT\w*|NOTADB|TOOBIG|CONSTRAINT_(NOTNULL|CHECK))\b/;

/** The message of db/link-store.ts when the last number stored is not the one a telegram follows. */
const OUT_OF_SEQUENCE = / out of sequence: /;

/**
 * Why a failed commit of a message from the sorter would fail again if the sorter sent it again,
 * or null if it may pass. `numbering`: the store refused its number (lasting only if its
 * predecessor was kept: the session tells, lib/link/session.ts, the peer's half).
 */
export function lastingFailure(err: unknown): { numbering: boolean; reason: string } | null {
  const reason = err instanceof Error ? err.message : String(err);
  if (OUT_OF_SEQUENCE.test(reason)) return { numbering: true, reason };
  return LASTING.test(reason) ? { numbering: false, reason } : null;
}
