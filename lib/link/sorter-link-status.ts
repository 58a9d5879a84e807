// What the rest of the service sees of the link to the sorter: the SorterLink interface, its
// status for GET /status and the dashboard, and the link of test mode. Apart from the TCP client
// (sorter-link.ts) so that handlers and checks depend on this shape, not on sockets.
import type { OutboxEntry } from '../../db/outbox-store';
import type { DeliveryState, OutboundMessage } from '../../model/messages';
import type { SessionCounters } from './session-port';
import type { OutboundEncoding, OutboundTelegram } from '../layout/wire';

/** What GET /status shows of the link to the sorter. */
export interface SorterLinkStatus {
  Connected: boolean;
  Address: string | null;
  /** Connected or disconnected since (null: never connected yet). */
  Since: string | null;
  LastTelegramIn: string | null;
  LastTelegramOut: string | null;
  /** Connected, Disconnected, or Refusing: connected, the sorter's telegrams refused for a reason that will not heal by itself. */
  State: 'Connected' | 'Disconnected' | 'Refusing';
  /** Why the sorter's telegrams are refused (State Refusing), else null. */
  RefusingBecause: string | null;
  [counter: string]: unknown;
}

/** A telegram as the dashboard shows it: when, which way, and its content between STX and ETX. */
export interface TelegramSeen {
  At: string;
  Direction: 'IN' | 'OUT';
  Telegram: string;
}

/** The service's side of the link to the sorter, as the handlers see it. */
export interface SorterLink {
  status(): SorterLinkStatus;
  /** The latest telegrams in and out, oldest first. */
  recentTelegrams(): TelegramSeen[];
  /**
   * A new outbox entry is committed: send what the link can now. Says how that entry travels.
   * `acknowledged` is called when the sorter acknowledges it (an ACK, in a layout that has them).
   */
  offer(entry: OutboxEntry, acknowledged?: () => void, telegram?: OutboundTelegram): DeliveryState;
  /**
   * An entry offered now will be acknowledged by the sorter: the link is up and its layout
   * acknowledges each telegram. A POST's entry may then be sent before its sync, and answered on
   * the ACK or the sync, whichever comes first (DurableBySorterAck). A full window does not change
   * that: the entry goes when the telegram before it is acknowledged, which a stalled disk does
   * not delay, while the sync may be seconds away.
   */
  acknowledgesPromptly(): boolean;
  /**
   * `message` as the sorter's layout carries it, or why it cannot (a value wider than its field
   * there, a value its enum has no code for, a telegram type it lacks): asked before a POST is
   * committed, so that the WCS gets a 400 naming the field instead of a 200 for an entry dropped
   * at sending; the telegram is given back to `offer`, and so encoded once. Test mode: nothing
   * is encoded, nothing refused.
   */
  encode(message: OutboundMessage): OutboundEncoding | null;
  /** Connect to the sorter (the live link; offline: nothing). */
  start(): void;
  stop(): Promise<void>;
}

/** The link in test mode: nothing is connected and nothing is sent. */
export function offlineLink(address: string | null): SorterLink {
  return {
    status: () => ({
      Connected: false,
      Address: address,
      Since: null,
      LastTelegramIn: null,
      LastTelegramOut: null,
      State: 'Disconnected',
      RefusingBecause: null,
      ...Object.fromEntries(
        [
          'TelegramsIn',
          'TelegramsOut',
          'Resends',
          'NaksSent',
          'NaksReceived',
          'DuplicatesReceived',
          'GarbageBytes',
          'Reconnects',
          'ConnectionsLost',
          'ConnectAttemptsFailed',
          'DroppedAssignments',
          'DroppedSettings',
          'InFlight',
        ].map((k) => [k, 0]),
      ),
    }),
    recentTelegrams: () => [],
    offer: () => 'Queued',
    acknowledgesPromptly: () => false,
    encode: () => null,
    start: () => {},
    stop: async () => {},
  };
}

/** The figures a live link's status is made of: the session's, the connection's and the outbox's. */
export interface LinkFigures {
  connected: boolean;
  address: string;
  since: string | null;
  /** Times in ms since the epoch; 0: nothing yet. */
  lastInAt: number;
  lastOutAt: number;
  counters: SessionCounters;
  /** Connections made (the first one included), connections that were up and dropped, attempts that never connected. */
  connections: { made: number; lost: number; failedAttempts: number };
  dropped: { assignments: number; settings: number };
  inFlight: number;
  /** Why the sorter's telegrams are refused for good now (a failure that will not heal by itself), or null. */
  refusing: string | null;
}

/** A live link's status from its figures, in the order GET /status shows them. */
export function linkStatus(f: LinkFigures): SorterLinkStatus {
  const c = f.counters;
  const iso = (ms: number) => (ms > 0 ? new Date(ms).toISOString() : null);
  return {
    Connected: f.connected,
    Address: f.address,
    Since: f.since,
    LastTelegramIn: iso(f.lastInAt),
    LastTelegramOut: iso(f.lastOutAt),
    State: !f.connected ? 'Disconnected' : f.refusing !== null ? 'Refusing' : 'Connected',
    RefusingBecause: f.refusing,
    TelegramsIn: c.telegramsIn,
    TelegramsOut: c.telegramsOut,
    Resends: c.resends,
    NaksSent: c.naksSent,
    NaksReceived: c.naksReceived,
    DuplicatesReceived: c.duplicatesReceived,
    GarbageBytes: c.garbageBytes,
    // The first connection is not a reconnect.
    Reconnects: Math.max(0, f.connections.made - 1),
    ConnectionsLost: f.connections.lost,
    ConnectAttemptsFailed: f.connections.failedAttempts,
    DroppedAssignments: f.dropped.assignments,
    DroppedSettings: f.dropped.settings,
    InFlight: f.inFlight,
  };
}
