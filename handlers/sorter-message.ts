// The telegram trigger: a REQUEST, VERIFY or SCAN from the sorter, committed to its queue.
import type { Accepted } from '../db/link-store';
import type { QueueDispatcher, UncommittedMessages } from '../lib/queue/dispatcher';
import { type HandlerResult, ok, telegramFunction } from '../lib/functions/define';
import type { WakeMeter } from '../lib/ops/latency';
import type { Logger } from '../lib/process/logger';
import type { InboundMessage } from '../lib/link/session-port';
import type { QueueMessages, QueueName } from '../model/messages';
import type { StoredAges } from '../lib/queue/arrivals';

/** What the sorter-message handler needs. */
export interface SorterMessageDeps {
  links: {
    acceptFromPeer(
      peer: string,
      seq: number,
      after: number | null,
      message: InboundMessage['message'],
      at: string,
      dropSuperseded?: boolean,
      id?: number | null,
    ): Promise<Accepted>;
  };
  dispatchers: { [Q in QueueName]: QueueDispatcher<Q> };
  /** When each message arrived, on the clock that never steps (MaxRequestAgeSeconds, the oldest message's age). */
  ages: Pick<StoredAges, 'arrived' | 'now'>;
  /** Queue ids given on arrival, and the messages handed out before their commit (HandOutBeforeCommit). */
  uncommitted: Pick<UncommittedMessages, 'nextId' | 'refused' | 'add' | 'settled'>;
  /** Peers whose latest commit failed: their messages are handed out only once committed, until one commits again. */
  failingPeers: Set<string>;
  wake: WakeMeter;
  /** Counts what arrived; the decision latency of a REQUEST starts when its bytes arrived. */
  metrics: { messagesIn: { inc(labels: { queue: QueueName; type: string }): void } };
  decisions: { requested(trackId: string, at: number): void };
  settings: { Sorter: { PeerName: string }; DropSupersededRequests: boolean; HandOutBeforeCommit: boolean };
  /** Commits go through promptly: no lock or failing write holds them up (db/writer.ts, prompt). */
  storage: { prompt(): boolean };
  /** REQUESTs taken out of the queue without reaching a WCS, since start. */
  requestsRemoved: { Superseded: number; Expired: number };
  clock: () => Date;
  log: Logger;
  /** Told of every message (the SORTER_SILENT alarm). */
  alarms?: { sorterMessage(): void };
}

/** The queue a message from the sorter goes to: SCAN to destination, REQUEST and VERIFY to sortation. */
const queueOf = (message: InboundMessage['message']): QueueName => (message.Type === 'SCAN' ? 'destination' : 'sortation');

/**
 * A REQUEST, VERIFY or SCAN from the sorter (telegram trigger): commit it to its queue with its
 * sequence number (only if the last number stored is `after`, or any with `after` null) under the id given it on arrival,
 * and wake the clients waiting on that queue: at once with HandOutBeforeCommit while commits go
 * through promptly (the message is handed out while its commit waits in the commit window), else
 * once it is committed (and only then while this peer's commits fail). Resolves once committed: the sorter link acknowledges it only then. A
 * REQUEST takes the older REQUESTs of its item out of the queue in the same commit
 * (DropSupersededRequests).
 */
export async function acceptSorterMessage(deps: SorterMessageDeps, event: InboundMessage): Promise<HandlerResult> {
  const queue = queueOf(event.message);
  const at = deps.clock().toISOString();
  deps.alarms?.sorterMessage();
  // The decision starts when the REQUEST's bytes arrived; its assignment may now come before its commit ends.
  if (event.message.Type === 'REQUEST') deps.decisions.requested(event.message.TrackID, event.arrivedAt);
  // Its id now, handed out early or not: a message handed out early holds one the writer must not give again.
  const given = deps.uncommitted.nextId(queue);
  deps.ages.arrived(queue, given, deps.ages.now());
  // Not while the storage is held up (a lock, a write that does not go through; a slow sync does
  // not count, commits go on beside it): the WCS could not get its answer committed either. Nor while this peer's commits fail: each resend would reach the WCS again.
  const peer = deps.settings.Sorter.PeerName;
  const early =
    deps.settings.HandOutBeforeCommit && deps.storage.prompt() && !deps.failingPeers.has(peer)
      ? deps.uncommitted.add(queue, event.message as QueueMessages[typeof queue], at, given)
      : null;
  if (early) handOut(deps, queue, early.id, event, false);
  let accepted: Accepted;
  try {
    accepted = await deps.links.acceptFromPeer(
      peer,
      event.seq,
      event.after,
      event.message,
      at,
      deps.settings.DropSupersededRequests,
      given,
    );
  } catch (err) {
    deps.uncommitted.refused(queue);
    deps.failingPeers.add(peer);
    throw err;
  } finally {
    if (early) deps.uncommitted.settled(early);
  }
  deps.failingPeers.delete(peer);
  const { id, superseded } = accepted;
  if (superseded > 0 && event.message.Type === 'REQUEST') {
    deps.requestsRemoved.Superseded += superseded;
    deps.log.debug(
      { trackId: event.message.TrackID, recirculationCount: event.message.RecirculationCount, superseded },
      'older REQUESTs of a recirculated item taken out of the queue',
    );
  }
  deps.metrics.messagesIn.inc({ queue, type: event.message.Type });
  if (!early) handOut(deps, queue, id, event, true);
  return ok({ Queue: queue, Id: id });
}

/**
 * Wake the clients waiting on the queue (`committed`: its row is in the table; else its commit is
 * under way). A telegram sent again after an earlier run of the service may have handed it out
 * before its commit is marked as a possible duplicate.
 */
function handOut(deps: SorterMessageDeps, queue: QueueName, id: number, event: InboundMessage, committed: boolean): void {
  if (event.resent && deps.settings.HandOutBeforeCommit) deps.dispatchers[queue].mayBeRepeat(id);
  // Wake latency is measured for messages a client is waiting for; the time a message waits for
  // a client to ask is queueing, which depends on the WCS, not on us.
  if (deps.dispatchers[queue].waiting > 0) deps.wake.arrived(queue, id, event.arrivedAt);
  deps.dispatchers[queue].notify(committed);
}

export const fn = telegramFunction(acceptSorterMessage);
