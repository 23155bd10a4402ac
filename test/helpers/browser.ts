/**
 * The test browser: Debian's Chromium headless shell (`scripts/browser.sh` installs it; CHROMIUM_PATH
 * overrides, e.g. /usr/bin/chromium), driven by playwright-core — no browser is ever downloaded.
 * The headless shell is Chromium's renderer without the desktop browser around it: the same engine
 * for what the tests check (layout, CSP, scripts, screenshots) at less CPU a page, which a suite of
 * page tests sharing two cores feels. Without it a page test fails, it never skips.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium-headless-shell';

/** The flags these machines need (no sandbox as root, and nothing that reaches for the network). */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Starts headless Chromium; `forWhat` names the test in the error when there is none. */
export async function launchBrowser(forWhat: string): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(
      `no Chromium at ${CHROMIUM_PATH}: ${forWhat} needs a real browser. Run scripts/browser.sh ` +
        `(installs Debian's 'chromium-headless-shell') or set CHROMIUM_PATH.`,
    );
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}
