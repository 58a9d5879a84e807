// POST /destination: destination settings, enums parsed leniently with defaults, forwarded
// through the outbox.
import { BatchDoorStatus, DestinationStatus, EnumDefaults, LightColor, LightStatus, parseEnum } from '../model/enums';
import type { DestinationSetting } from '../model/messages';
import { type HandlerResult, httpFunction, postEvent } from '../lib/functions/define';
import { postErrors, postNotes } from '../lib/http/routes';
import { destinationAck, destinationBody } from '../lib/http/message-schemas';
import { type DefaultApplied, type ForwardDeps, forward } from '../lib/functions/forward';

/** What the destination-settings handler needs. */
export type DestinationSettingsDeps = ForwardDeps;

/** A validated POST /destination body: enum fields are whatever the client sent. */
export interface DestinationSettingsEvent {
  body: {
    Destination: string;
    DestinationStatus?: unknown;
    DestinationText?: string | null;
    LightStatus?: unknown;
    LightColor?: unknown;
    BatchDoorStatus?: unknown;
    Type?: string;
  };
  clientAddress: string | null;
}

/**
 * The spec's rule: enums parse case-insensitively; a value that does not parse (a missing one
 * included) takes the default and is not an error. Returns the canonical settings and the
 * defaults that were applied.
 */
export function normaliseDestinationSetting(body: DestinationSettingsEvent['body']): {
  setting: DestinationSetting;
  defaults: DefaultApplied[];
} {
  const defaults: DefaultApplied[] = [];
  const pick = <T extends string, F extends T | null>(field: string, values: readonly T[], received: unknown, fallback: F): T | F => {
    const parsed = parseEnum(values, received);
    if (parsed !== undefined) return parsed;
    defaults.push({ Field: field, Received: received ?? null, Applied: fallback });
    return fallback;
  };
  const setting: DestinationSetting = {
    Destination: body.Destination,
    DestinationStatus: pick('DestinationStatus', DestinationStatus, body.DestinationStatus, EnumDefaults.DestinationStatus),
    DestinationText: body.DestinationText ?? '',
    LightStatus: pick('LightStatus', LightStatus, body.LightStatus, EnumDefaults.LightStatus),
    LightColor: pick('LightColor', LightColor, body.LightColor, EnumDefaults.LightColor),
    // Not applicable unless given: a missing BatchDoorStatus is null, not a default.
    BatchDoorStatus:
      body.BatchDoorStatus === undefined || body.BatchDoorStatus === null
        ? null
        : pick('BatchDoorStatus', BatchDoorStatus, body.BatchDoorStatus, null),
  };
  return { setting, defaults };
}

/** POST /destination: normalise, then forward (outbox in live mode, nowhere in test mode). */
export function postDestinationSettings(deps: DestinationSettingsDeps, event: DestinationSettingsEvent): Promise<HandlerResult> {
  const { setting, defaults } = normaliseDestinationSetting(event.body);
  return forward(deps, { kind: 'DESTINATION', body: setting }, event.clientAddress, defaults);
}

export const fn = httpFunction(postDestinationSettings, {
  payload: destinationBody,
  notes: [
    'Enum fields parse case-insensitively; a value that does not parse (or is missing) takes the default (DestinationStatus NotReady, LightStatus Off, LightColor Off), is listed in DefaultsApplied, and is not an error.',
    ...postNotes,
  ],
  responses: () => ({
    200: { description: 'Acknowledged', schema: destinationAck },
    ...postErrors('DestinationSetBadRequestError', '"Destination" is required'),
  }),
  event: (request) => postEvent<DestinationSettingsEvent['body']>(request),
});
