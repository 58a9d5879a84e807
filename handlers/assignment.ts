import type { OutboxStore } from '../db/outbox-store';
import type { Assignment } from '../lib/messages';
import { type HandlerResult, ok } from '../lib/results';
import type { SorterLink } from '../lib/sorter-link';

/** What the assignment handler needs. */
export interface AssignmentDeps {
  testMode: boolean;
  outbox: OutboxStore;
  link: SorterLink;
  clock: () => Date;
  /** Run a write durably; resolves once it is committed (group commit). */
  commit: <T>(fn: () => T) => Promise<T>;
}

/** A validated POST /sortation body (field names already canonical, lengths checked at the edge). */
export interface AssignmentEvent {
  body: { TrackID: string; Destination: string; Barcode?: string; Type?: string };
  clientAddress: string | null;
}

/**
 * POST /sortation: write the assignment to the outbox before answering, so an acknowledged
 * assignment survives a crash; in test mode nothing is written or sent.
 */
export async function postAssignment(deps: AssignmentDeps, event: AssignmentEvent): Promise<HandlerResult> {
  const assignment: Assignment = { TrackID: event.body.TrackID, Destination: event.body.Destination, Barcode: event.body.Barcode ?? '' };
  if (deps.testMode) return ok({ Accepted: true, Delivery: 'NotSent', OutboxID: null, Message: assignment, DefaultsApplied: [] });
  const id = await deps.commit(() => deps.outbox.add({ kind: 'ASSIGNMENT', body: assignment }, event.clientAddress, deps.clock().toISOString()));
  return ok({ Accepted: true, Delivery: deps.link.offer(id), OutboxID: id, Message: assignment, DefaultsApplied: [] });
}
