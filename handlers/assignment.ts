// POST /sortation: a destination assignment for a REQUEST, forwarded to the sorter through the
// outbox.
import type { Assignment } from '../model/messages';
import { type HandlerResult, httpFunction, postEvent } from '../lib/functions/define';
import { postErrors, postNotes } from '../lib/http/routes';
import { assignmentAck, assignmentBody } from '../lib/http/message-schemas';
import { type ForwardDeps, forward } from '../lib/functions/forward';

/** What the assignment handler needs. */
export type AssignmentDeps = ForwardDeps & {
  deliveries: { answered(trackId: string): void };
  /** The decision latency of the REQUEST ends when its assignment is accepted. */
  decisions: { assigned(trackId: string): void };
};

/** A validated POST /sortation body (field names already canonical, lengths checked at the edge). */
export interface AssignmentEvent {
  body: { TrackID: string; Destination: string; Barcode?: string | null; Type?: string | null };
  clientAddress: string | null;
}

/** POST /sortation: the assignment goes to the outbox (live) or nowhere (test mode). */
export async function postAssignment(deps: AssignmentDeps, event: AssignmentEvent): Promise<HandlerResult> {
  // The answer proves its REQUEST was read, whatever becomes of the answer (X-Ack-Mode explicit).
  deps.deliveries.answered(event.body.TrackID);
  const assignment: Assignment = { TrackID: event.body.TrackID, Destination: event.body.Destination, Barcode: event.body.Barcode ?? '' };
  const result = await forward(deps, { kind: 'ASSIGNMENT', body: assignment }, event.clientAddress, []);
  if (result.kind === 'ok' && result.status === 200) deps.decisions.assigned(assignment.TrackID);
  return result;
}

export const fn = httpFunction(postAssignment, {
  payload: assignmentBody,
  notes: ['TrackID and Destination are required non-empty strings; Barcode and Type are optional.', ...postNotes],
  responses: () => ({
    200: { description: 'Acknowledged', schema: assignmentAck },
    ...postErrors('AssignmentBadRequestError', '"TrackID" is required'),
  }),
  event: (request) => postEvent<AssignmentEvent['body']>(request),
});
