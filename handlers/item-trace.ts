// GET /items/{TrackID}: what happened to an item, in one answer.
import { type HandlerResult, httpFunction, ok, pathParam } from '../lib/functions/define';
import { errorDto, unauthorized } from '../lib/http/routes';
import { itemParams, itemTimelineDto } from '../lib/http/ops-schemas';
import type { ItemTimeline } from '../db/item-trace';

/** What the item trace needs: the timeline reader over the database. */
export interface ItemTraceDeps {
  items: { timeline(trackId: string): Promise<ItemTimeline | null> };
}

/** Every REQUEST with its recirculation, who got it, the assignment and its fate, the VERIFY. */
export async function getItem(deps: ItemTraceDeps, event: { trackId: string }): Promise<HandlerResult> {
  const timeline = await deps.items.timeline(event.trackId);
  return timeline
    ? ok(timeline)
    : ok(
        {
          statusCode: 404,
          error: 'Not Found',
          message: `nothing is known of item "${event.trackId}" (never seen, or its history was purged after HistoryRetentionDays)`,
        },
        404,
      );
}

export const fn = httpFunction(getItem, {
  params: itemParams,
  notes: [
    'Oldest first: each REQUEST (with its recirculation count) and when it was handed to which client, or taken out of the queue; each assignment posted, and when the sorter acknowledged it or why it was dropped; the VERIFY and its destination. Also on the command line: npm run trace -- <TrackID>.',
  ],
  responses: () => ({
    200: { description: "The item's timeline", schema: itemTimelineDto },
    404: {
      description: 'Nothing is known of this item',
      schema: errorDto(
        'ItemNotFoundError',
        404,
        'Not Found',
        'nothing is known of item "0004711" (never seen, or its history was purged after HistoryRetentionDays)',
      ),
    },
    401: unauthorized,
  }),
  event: (request) => ({ trackId: pathParam(request, 'TrackID') }),
});
