// The delivery tracker's vocabulary (lib/http/read-proof/delivery.ts): the setting, the proofs and reasons it
// records, what it keeps per response and per connection, and what /status shows.
import type { Socket } from 'node:net';
import type { Claim } from '../../queue/dispatcher';

/** The `Delivery` setting. */
export type DeliveryMode = 'AtLeastOnce' | 'AtMostOnce';

/** What proved that a client read a message (stored in delivered_history.read_proof). */
export type ReadProof = 'NextRequest' | 'ClientClose' | 'ServerClose' | 'LastResponse' | 'Acknowledged' | 'Answered' | 'Grace' | 'Injected';
/** Every proof, in the order /status lists them. */
export const READ_PROOFS: readonly ReadProof[] = [
  'NextRequest',
  'ClientClose',
  'ServerClose',
  'LastResponse',
  'Acknowledged',
  'Answered',
  'Grace',
  'Injected',
];
/** Why a message went back to the head of its queue. */
export type ReturnReason = 'Reset' | 'ClosedUnread' | 'NoProof';
/** Every reason, in the order /status lists them. */
export const RETURN_REASONS: readonly ReturnReason[] = ['Reset', 'ClosedUnread', 'NoProof'];

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

/** One response carrying a message, from its write until the message is committed or released. */
export interface Handout {
  claim: Claim;
  conn: Conn | null;
  address: string | null;
  deliveredAt: string | null;
  /** The whole response was handed to the operating system ('finish'). */
  written: boolean;
  /** The client acknowledges it itself (X-Ack-Mode: explicit): only its acknowledgement proves the read. */
  explicit: boolean;
  timer: NodeJS.Timeout | null;
  done: boolean;
}

/** What the tracker knows of one client connection. */
export interface Conn {
  socket: Socket;
  handouts: Set<Handout>;
  /** While we hold our FIN back to judge the client's: lets Node's end() go on. */
  releaseEnd: (() => void) | null;
  /**
   * We closed the connection first, and the client's clean close in answer proves the read:
   * 'idle' to ask a client that kept an unproven response, 'last' after the connection's last
   * response (the client asked to close, or spoke HTTP/1.0).
   */
  asking: 'idle' | 'last' | null;
  askTimer: NodeJS.Timeout | null;
}

export const zero = <K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
