// What a telegram session asks of its side (lib/link/session-port.ts): the numbering rule that
// tells a repeat from a new telegram, and the refusal a port's deliver throws.
import { RefuseError } from '../../../lib/link/session-port';
import { isRepeat } from '../../../lib/link/session';
import { MAX_SEQUENCE } from '../../../bench/v1-codec';

describe('numbering rules', () => {
  it('recognises repeats at or shortly before the last accepted number, across the wrap', () => {
    expect(isRepeat(5, 0)).toBe(false);
    expect(isRepeat(5, 5)).toBe(true);
    expect(isRepeat(4, 5)).toBe(true);
    expect(isRepeat(6, 5)).toBe(false);
    expect(isRepeat(999999, 2)).toBe(true);
    expect(isRepeat(1, 999999)).toBe(false);
  });

  it('a repeat is within 100,000 numbers at or before the last accepted one; further back is new (the peer wrapped)', () => {
    expect(isRepeat(500_001, 600_000)).toBe(true);
    expect(isRepeat(500_000, 600_000)).toBe(false);
    // Across the wrap (numbers run 1..999999): 10 - 900010 + 999999 = 99999 back.
    expect(MAX_SEQUENCE).toBe(999_999);
    expect(isRepeat(900_010, 10)).toBe(true);
    expect(isRepeat(900_009, 10)).toBe(false);
  });

  it('follows the numbering range and window it is given (a layout with another range)', () => {
    expect(isRepeat(9990, 5, 9999, 100)).toBe(true);
    expect(isRepeat(9000, 5, 9999, 100)).toBe(false);
    expect(isRepeat(6, 5, 9999, 100)).toBe(false);
  });
});

describe('RefuseError', () => {
  it('carries the NAK code for the telegram it refuses', () => {
    const err = new RefuseError(3, 'no function takes SCAN');
    expect(err).toBeInstanceOf(Error);
    expect([err.name, err.code, err.message]).toEqual(['RefuseError', 3, 'no function takes SCAN']);
  });
});
