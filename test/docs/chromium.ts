// Debian's headless Chromium, driven by playwright-core (which brings no browser of its own). .ci/run installs
// the `chromium` package when it is missing; without it the page test fails, it never skips.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

/** The `chromium` on PATH (where Debian's package puts it: /usr/bin/chromium), or null. */
export function findChromium(): string | null {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    if (!directory) continue;
    const candidate = join(directory, 'chromium');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

export const CHROMIUM_MISSING =
  'Chromium is not installed (no `chromium` on PATH). The API reference test opens GET /api/v1/docs in headless Chromium: ' +
  "install Debian's package (`apt-get install --no-install-recommends chromium`, as .ci/run does).";

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
