// Test helper: Debian's Chromium driven by playwright-core for the dashboard's page tests, or why
// it cannot run here (the suite is then skipped with one line).
import fs from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import type { Missing } from './tools';

/** Where Chromium is: CHROMIUM_PATH, or Debian's package. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Nothing missing, or how to get Chromium. */
export const noChromium: Missing = fs.existsSync(CHROMIUM)
  ? {}
  : { chromium: `apt-get install chromium, or set CHROMIUM_PATH; looked for ${CHROMIUM}` };

/** A headless Chromium as a test runs it: no sandbox (root in CI), no GPU, nothing from the network. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--no-first-run',
      '--disable-extensions',
    ],
  });
}
