// The secrets an installation's processes share (the cursor secret, which also keys photo URLs, and the key that seals
// webhook signing secrets and connector credentials) when CURSOR_SECRET or WEBHOOK_SECRET_KEY is not set: generated
// once per installation and kept beside its data in DATA_DIR/secrets.json (mode 0600), as the sandbox key is. A
// constant default would be the same on every sandbox, so anyone could forge cursors and photo URLs or open sealed
// secrets of any sandbox they could read the database of (docs/decisions/0026-installation-secrets-public-base-url-connector-destinations.md).
// Production never gets here: loadConfig refuses it without both variables. Neither do the split roles: checkStart
// refuses them without both, since they may run on machines that share no DATA_DIR.
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config, InstallationSecrets, ServiceConfig } from './config.js';
import { StartProblem } from './start-checks.js';

export const SECRETS_FILE = 'secrets.json';

/** The configuration with its secrets: the variables where set, the installation's file (made when missing) for the rest. */
export function withInstallationSecrets(config: Config): ServiceConfig {
  if (config.cursorSecret !== null && config.webhookSecretKey !== null) {
    return { ...config, cursorSecret: config.cursorSecret, webhookSecretKey: config.webhookSecretKey };
  }
  const stored = installationSecrets(config.dataDir);
  return {
    ...config,
    cursorSecret: config.cursorSecret ?? stored.cursorSecret,
    webhookSecretKey: config.webhookSecretKey ?? stored.webhookSecretKey,
  };
}

/** Reads DATA_DIR/secrets.json, writing it first when it does not exist. */
export function installationSecrets(dataDir: string): InstallationSecrets {
  const path = join(dataDir, SECRETS_FILE);
  const unusable = (why: string) =>
    new StartProblem(
      `DATA_DIR=${dataDir} cannot hold the installation's secrets: ${why}. Fix it, or set CURSOR_SECRET and WEBHOOK_SECRET_KEY (the same for every process).`,
    );
  try {
    return parse(readFileSync(path, 'utf8'), path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw error instanceof StartProblem
        ? error
        : unusable(`${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const generated =
    JSON.stringify(
      {
        cursorSecret: randomBytes(32).toString('base64url'),
        webhookSecretKey: randomBytes(32).toString('hex'),
      },
      null,
      2,
    ) + '\n';
  // Written whole under a name of its own, then linked into place: link fails when the file exists, so of several
  // processes of one installation starting at once (npm start and an admin command) exactly one writes the secrets,
  // and no process ever reads a half-written file.
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(temporary, generated, { mode: 0o600, flag: 'wx' });
    try {
      linkSync(temporary, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  } catch (error) {
    throw unusable(`${path} cannot be written (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  } finally {
    try {
      unlinkSync(temporary);
    } catch {
      /* never written */
    }
  }
  return parse(readFileSync(path, 'utf8'), path);
}

function parse(text: string, path: string): InstallationSecrets {
  let stored: { cursorSecret?: unknown; webhookSecretKey?: unknown } = {};
  try {
    stored = JSON.parse(text) as typeof stored;
  } catch {
    /* judged below */
  }
  const cursorSecret =
    typeof stored.cursorSecret === 'string' && stored.cursorSecret.length >= 16 ? stored.cursorSecret : null;
  const webhookSecretKey =
    typeof stored.webhookSecretKey === 'string' && /^[0-9a-f]{64}$/i.test(stored.webhookSecretKey)
      ? Buffer.from(stored.webhookSecretKey, 'hex')
      : null;
  if (cursorSecret === null || webhookSecretKey === null) {
    // Never replaced by fresh secrets: what was sealed under the old key would become unreadable without a word.
    throw new StartProblem(
      `${path} is damaged (it must hold {"cursorSecret", "webhookSecretKey"} as this service wrote it): restore it from a backup, or set CURSOR_SECRET and WEBHOOK_SECRET_KEY.`,
    );
  }
  return { cursorSecret, webhookSecretKey };
}
