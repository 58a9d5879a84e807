// The delivery tracker's vocabulary (lib/delivery.ts): the setting, the proofs and reasons it
// records, what it keeps per response and per connection, and what /status shows.
import type { Socket } from 'node:net';
import type { Claim } from './dispatcher';

/** The `Delivery` setting. */
export type DeliveryMode = 'AtLeastOnce' | 'AtMostOnce';

/** What proved that a client read a message (stored in delivered_history.read_proof). */
export type ReadProof = 'NextRequest' | 'ClientClose' | 'ServerClose' | 'Grace' | 'Injected';
/** Why a message went back to the head of its queue. */
export type ReturnReason = 'Reset' | 'ClosedUnread' | 'NoProof';

/** Settings of the tracker. */
export interface DeliverySettings {
  mode: DeliveryMode;
  /** AtLeastOnce: at most this long after a response without evidence, the client is asked by a close. */
  visibilityTimeoutMs: number;
  /** After a client's FIN, how long to watch for the reset that says it had not read our response. */
  closeGraceMs: number;
  clock: () => Date;
}

/** What /status shows of deliveries. */
export interface DeliveryStatus {
  Mode: DeliveryMode;
  AwaitingProof: number;
  Confirmed: Record<ReadProof, number>;
  Returned: Record<ReturnReason, number>;
}

/** AtMostOnce: a response counts as read when its connection showed no failure for this long (ms). */
export const AT_MOST_ONCE_GRACE_MS = 5;
/** After we closed a connection to ask, how long the client has to close cleanly in answer (ms). */
export const ASK_ANSWER_MS = 2000;
/** What getpeername returns while the connection is up. */
export const CONNECTED = 0;

/** One response carrying a message, from its write until the message is committed or released. */
export interface Handout {
  claim: Claim;
  conn: Conn | null;
  address: string | null;
  deliveredAt: string | null;
  /** The whole response was handed to the operating system ('finish'). */
  written: boolean;
  timer: NodeJS.Timeout | null;
  done: boolean;
}

/** What the tracker knows of one client connection. */
export interface Conn {
  socket: Socket;
  handouts: Set<Handout>;
  /** Arguments of Node's end() while we hold our FIN back to judge the client's. */
  heldEnd: unknown[] | null;
  /** We closed the connection to ask the client whether it read its last response. */
  asking: boolean;
  askTimer: NodeJS.Timeout | null;
}

export const zero = <K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

