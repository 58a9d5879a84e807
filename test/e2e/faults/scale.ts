// How hard the fault suite pushes: CI's size by default, longer with SOAK=N (`npm run soak`).
/** The multiplier of counts and durations: 1 in CI, SOAK (e.g. 10) in a soak run. */
export const SOAK = Math.max(1, Number(process.env.SOAK ?? 1) || 1);

/** A figure the suite reports, as one line `FAULTS {json}` (collected for docs/reliability.md). */
export function report(name: string, figures: Record<string, unknown>): void {
  process.stdout.write(`FAULTS ${JSON.stringify({ name, soak: SOAK, ...figures })}\n`);
}

/** A seed for fast-check: FAULT_SEED to replay a run, else a new one (printed with the figures). */
export const seed = Number(process.env.FAULT_SEED ?? Date.now() % 2 ** 31);
