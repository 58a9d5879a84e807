import type { Assignment } from '../lib/messages';
import type { HandlerResult } from '../lib/results';
import { type ForwardDeps, forward } from './forward';

/** What the assignment handler needs. */
export type AssignmentDeps = ForwardDeps;

/** A validated POST /sortation body (field names already canonical, lengths checked at the edge). */
export interface AssignmentEvent {
  body: { TrackID: string; Destination: string; Barcode?: string; Type?: string };
  clientAddress: string | null;
}

/** POST /sortation: the assignment goes to the outbox (live) or nowhere (test mode). */
export function postAssignment(deps: AssignmentDeps, event: AssignmentEvent): Promise<HandlerResult> {
  const assignment: Assignment = { TrackID: event.body.TrackID, Destination: event.body.Destination, Barcode: event.body.Barcode ?? '' };
  return forward(deps, { kind: 'ASSIGNMENT', body: assignment }, event.clientAddress, []);
}
