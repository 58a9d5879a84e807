import type { GoneWatch, QueueDispatcher } from '../lib/dispatcher';
import type { QueueName } from '../lib/messages';
import { type HandlerResult, empty } from '../lib/results';

/** What dequeue needs. */
export interface DequeueDeps {
  dispatchers: { [Q in QueueName]: QueueDispatcher<Q> };
  settings: { DefaultTimeOut: number };
}

/** A GET on a queue: which queue, the raw `timeOut`, and how to learn that the client left. */
export interface DequeueEvent {
  queue: QueueName;
  timeOut?: number;
  gone?: GoneWatch;
  /** A HEAD request (a monitoring probe): it has no body to carry a message, so it never takes one. */
  probe?: boolean;
}

/** Seconds to wait: truncated to whole seconds, clamped to 0..30; omitted means the configured default. */
export function waitSeconds(timeOut: number | undefined, defaultTimeOut: number): number {
  const t = Math.trunc(timeOut ?? defaultTimeOut);
  return Math.min(30, Math.max(0, t));
}

/** Long-poll one queue: the next message (210/211/212 once written), or empty (204) after the wait. */
export async function dequeue(deps: DequeueDeps, event: DequeueEvent): Promise<HandlerResult> {
  if (event.probe) return empty;
  const seconds = waitSeconds(event.timeOut, deps.settings.DefaultTimeOut);
  const claim = await deps.dispatchers[event.queue].take(seconds * 1000, event.gone);
  return claim ? { kind: 'message', claim } : empty;
}
