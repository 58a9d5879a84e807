// Test helper: an element the test expects a list to hold, read without `!`.

/** The element at `i` (negative: from the end); fails the test, saying what the list holds, when it is not there. */
export function nth<T>(xs: readonly T[], i: number): T {
  const x = xs.at(i);
  if (x === undefined) throw new Error(`expected an element at ${i}; the list holds ${xs.length}: ${JSON.stringify(xs).slice(0, 200)}`);
  return x;
}

/** A list type with at least N elements of T (then any number). */
export type AtLeast<T, N extends number, First extends T[] = []> = First['length'] extends N
  ? [...First, ...T[]]
  : AtLeast<T, N, [...First, T]>;

/** The list, checked to hold at least `n` elements and typed so, so that the test can destructure them; fails the test otherwise. */
export function atLeast<T, N extends number>(n: N, xs: T[]): AtLeast<T, N> {
  if (xs.length < n) throw new Error(`expected at least ${n} elements; the list holds ${xs.length}: ${JSON.stringify(xs).slice(0, 200)}`);
  return xs as AtLeast<T, N>; // checked just above: the first n are there
}
