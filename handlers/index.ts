import type { Deps } from '../lib/service';
import type { HandlerResult } from '../lib/results';
import { postAssignment } from './assignment';
import { dequeue } from './dequeue';
import { postDestinationSettings } from './destination-settings';
import { housekeeping } from './housekeeping';
import { getStatus } from './status';

/** A handler as the manifest names it: `(deps, event) => result`. */
export type Handler = (deps: Deps, event: never) => HandlerResult | Promise<HandlerResult>;

/** Every handler, keyed by the name manifest.json uses for it. */
export const handlers: Record<string, Handler> = {
  'handlers/status.getStatus': getStatus,
  'handlers/dequeue.dequeue': dequeue,
  'handlers/assignment.postAssignment': postAssignment,
  'handlers/destination-settings.postDestinationSettings': postDestinationSettings,
  'handlers/housekeeping.housekeeping': housekeeping,
};
