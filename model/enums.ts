// The canonical enum values of the contract and their lenient parsing.
/** Canonical enum values: the one place the service spells them (README, "Canonical enum values"). */
export const DestinationStatus = ['Ready', 'NotReady'] as const;
export const LightStatus = ['Off', 'Solid', 'Flashing'] as const;
export const LightColor = ['Off', 'RED', 'GREEN', 'BLUE', 'YELLOW', 'WHITE'] as const;
export const BatchDoorStatus = ['OPENED', 'CLOSED'] as const;
export const MessageType = ['REQUEST', 'VERIFY', 'SCAN'] as const;

export type DestinationStatusValue = (typeof DestinationStatus)[number];
export type LightStatusValue = (typeof LightStatus)[number];
export type LightColorValue = (typeof LightColor)[number];
export type BatchDoorStatusValue = (typeof BatchDoorStatus)[number];
export type MessageTypeValue = (typeof MessageType)[number];

/** The spec's defaults when an enum in POST /destination does not parse (spec section 4). */
export const EnumDefaults = {
  DestinationStatus: 'NotReady',
  LightStatus: 'Off',
  LightColor: 'Off',
} as const;

/** Case-insensitive parse into a canonical value; undefined when the input is not one of them. */
export function parseEnum<T extends string>(values: readonly T[], input: unknown): T | undefined {
  if (typeof input !== 'string') return undefined;
  const wanted = input.toLowerCase();
  return values.find((v) => v.toLowerCase() === wanted);
}

/** Exact (case-sensitive) match, as replay files must spell keywords canonically. */
export function isExactEnum<T extends string>(values: readonly T[], input: string): input is T {
  return values.some((v) => v === input);
}
