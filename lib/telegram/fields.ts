// Widths and character rules of the text fields that travel in fixed-width telegrams.
/**
 * Widths of the text fields that travel to the sorter in fixed-width telegrams
 * (docs/sorter-protocol.md). The HTTP edge rejects values that do not fit instead of
 * truncating them, so these numbers are part of the public contract.
 */
export const FieldWidth = {
  TrackID: 20,
  Barcode: 48,
  Destination: 12,
  InductLocation: 12,
  DestinationText: 40,
} as const;

/**
 * Telegrams are printable ASCII (0x20-0x7E). Text fields are padded with trailing spaces,
 * so a value cannot end with a space: it would not survive the round trip.
 */
export const PrintableAscii = /^[\x20-\x7e]*$/;
export const NoTrailingSpace = /^(.*[^ ])?$/;
