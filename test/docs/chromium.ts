// Debian's headless Chromium, driven by playwright-core (which brings no browser of its own): its headless shell
// (`chromium-headless-shell`, the browser without its windowing layer) when installed, else the full `chromium`.
// .ci/run installs the shell when it is missing; with neither the page tests fail, they never skip.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

/**
 * The headless shell on PATH, else `chromium` (where Debian's packages put them: /usr/bin), or null. The shell renders
 * the same pages with the same engine for less CPU: measured over the two browser test files, decision 0055.
 */
export function findChromium(): string | null {
  for (const name of ['chromium-headless-shell', 'chromium']) {
    for (const directory of (process.env.PATH ?? '').split(delimiter)) {
      if (!directory) continue;
      const candidate = join(directory, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not in this directory
      }
    }
  }
  return null;
}

export const CHROMIUM_MISSING =
  'Chromium is not installed (neither `chromium-headless-shell` nor `chromium` on PATH). The API reference and console ' +
  "tests open their pages in headless Chromium: install Debian's package (`apt-get install --no-install-recommends " +
  'chromium-headless-shell`, as .ci/run does).';

/**
 * No sandbox (tests may run as root in a container), no GPU, and none of the browser's own background traffic
 * (updates, sync, safe browsing, QUIC probes): the only requests left are the page's, which the test inspects.
 * playwright gives every launch a fresh temporary profile.
 */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
