// spec/releases/<X.Y.Z>.json: the bundled description of each released version, written by `npm run release`.
// The newest one is what the breaking-change check compares the working spec with.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareVersions, SEMVER } from './versions.js';

export const RELEASES_DIR = join('spec', 'releases');

export interface ReleasedDescription {
  version: string;
  file: string;
  document: Record<string, any>;
}

export function latestRelease(root: string): ReleasedDescription {
  const versions = readdirSync(join(root, RELEASES_DIR))
    .map((name) => name.replace(/\.json$/, ''))
    .filter((name) => SEMVER.test(name))
    .sort(compareVersions);
  const version = versions.at(-1);
  if (!version) throw new Error(`${RELEASES_DIR}/ holds no released description (X.Y.Z.json)`);
  const file = join(RELEASES_DIR, `${version}.json`);
  return { version, file, document: JSON.parse(readFileSync(join(root, file), 'utf8')) as Record<string, any> };
}
