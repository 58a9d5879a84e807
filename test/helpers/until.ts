// Test helper: wait until a condition holds, or fail saying which one did not.

/**
 * Resolve once `cond` is true (checked every `everyMs`); reject after `ms` with an error naming
 * `what` (default: the condition's source). `cond` may be async (an HTTP call, a page query):
 * then give a longer `everyMs`.
 */
export async function until(cond: () => boolean | Promise<boolean>, ms = 5000, what?: string, everyMs = 10): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what ?? String(cond)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
