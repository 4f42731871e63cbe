// Every place the product's version is written, read and rewritten in one way. The spec's `info.version` is the
// version (it is also what GET /health answers); the others follow it, and a test fails when one disagrees.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { topReleasedVersion } from './changelog.js';

export const SEMVER = /^(\d+)\.(\d+)\.(\d+)$/;

export interface VersionedFile {
  /** Path relative to the repository root. */
  file: string;
  /** What the version is there, for messages. */
  role: string;
  read(text: string): string[];
  write(text: string, from: string, to: string): string;
}

const jsonVersions = (text: string, paths: string[][]): string[] => {
  const document = JSON.parse(text) as Record<string, any>;
  return paths.map((path) => path.reduce((node, key) => node?.[key], document as any) as string);
};

const jsonWrite =
  (paths: string[][]) =>
  (text: string, _from: string, to: string): string => {
    const document = JSON.parse(text) as Record<string, any>;
    for (const path of paths) {
      const parent = path.slice(0, -1).reduce((node, key) => node[key], document as any);
      parent[path.at(-1)!] = to;
    }
    return JSON.stringify(document, null, 2) + '\n';
  };

/** Replaces exactly the expected number of occurrences of a pattern, or refuses (the file changed shape). */
function replaceExactly(text: string, pattern: RegExp, replacement: string, expected: number, file: string): string {
  const found = text.match(new RegExp(pattern.source, 'gm'))?.length ?? 0;
  if (found !== expected)
    throw new Error(`${file}: expected ${expected} version line(s) matching ${pattern}, found ${found}`);
  return text.replace(new RegExp(pattern.source, 'gm'), replacement);
}

const escape = (version: string) => version.replace(/\./g, '\\.');

const LOCK_PATHS = [['version'], ['packages', '', 'version'], ['packages', 'client-sdk', 'version']];

export const VERSIONED_FILES: VersionedFile[] = [
  {
    file: 'spec/openapi.yaml',
    role: 'API description info.version (and GET /health)',
    read: (text) => [...text.matchAll(/^info:\n(?:  .*\n)*?  version: (\S+)$/gm)].map((m) => m[1]!),
    write: (text, from, to) =>
      replaceExactly(
        text,
        new RegExp(`^(info:\\n(?:  .*\\n)*?  version: )${escape(from)}$`),
        `$1${to}`,
        1,
        'spec/openapi.yaml',
      ),
  },
  {
    file: 'spec/paths/system/health.yaml',
    role: 'GET /health example',
    read: (text) => [...text.matchAll(/^ +version: (\S+)$/gm)].map((m) => m[1]!),
    write: (text, from, to) =>
      replaceExactly(text, new RegExp(`^( +version: )${escape(from)}$`), `$1${to}`, 1, 'spec/paths/system/health.yaml'),
  },
  {
    file: 'spec/paths/system/openapi-document.yaml',
    role: 'GET /openapi.json example',
    read: (text) => [...text.matchAll(/^ +version: (\d+\.\d+\.\d+)$/gm)].map((m) => m[1]!),
    write: (text, from, to) =>
      replaceExactly(
        text,
        new RegExp(`^( +version: )${escape(from)}$`),
        `$1${to}`,
        1,
        'spec/paths/system/openapi-document.yaml',
      ),
  },
  {
    file: 'spec/components/schemas/Health.yaml',
    role: 'Health.version schema example',
    read: (text) => [...text.matchAll(/examples: \['(\S+)'\]/g)].map((m) => m[1]!),
    write: (text, from, to) =>
      replaceExactly(
        text,
        new RegExp(`(examples: \\[')${escape(from)}('\\])`),
        `$1${to}$2`,
        1,
        'spec/components/schemas/Health.yaml',
      ),
  },
  {
    file: 'spec/paths/system/docs.yaml',
    role: 'GET /docs example page title',
    read: (text) =>
      [...text.matchAll(/<title>Distributor ERP Integration API (\S+): API reference<\/title>/g)].map((m) => m[1]!),
    write: (text, from, to) =>
      replaceExactly(
        text,
        new RegExp(`(<title>Distributor ERP Integration API )${escape(from)}(: API reference</title>)`),
        `$1${to}$2`,
        1,
        'spec/paths/system/docs.yaml',
      ),
  },
  {
    file: 'package.json',
    role: 'service package version',
    read: (text) => jsonVersions(text, [['version']]),
    write: jsonWrite([['version']]),
  },
  {
    file: 'client-sdk/package.json',
    role: 'SDK package version',
    read: (text) => jsonVersions(text, [['version']]),
    write: jsonWrite([['version']]),
  },
  {
    file: 'package-lock.json',
    role: 'lockfile versions of the service and the SDK workspace',
    read: (text) => jsonVersions(text, LOCK_PATHS),
    write: jsonWrite(LOCK_PATHS),
  },
];

export interface VersionReading {
  file: string;
  role: string;
  version: string | undefined;
}

/** Every version written in the repository, the changelog's top released version included. */
export function readVersions(root: string): VersionReading[] {
  const readings: VersionReading[] = [];
  for (const entry of VERSIONED_FILES) {
    const found = entry.read(readFileSync(join(root, entry.file), 'utf8'));
    if (found.length === 0) readings.push({ file: entry.file, role: entry.role, version: undefined });
    for (const version of found) readings.push({ file: entry.file, role: entry.role, version });
  }
  readings.push({
    file: 'CHANGELOG.md',
    role: 'top released version',
    version: topReleasedVersion(readFileSync(join(root, 'CHANGELOG.md'), 'utf8')),
  });
  return readings;
}

export function bump(version: string, part: 'minor' | 'patch'): string {
  const match = SEMVER.exec(version);
  if (!match) throw new Error(`${version} is not a version of the form X.Y.Z`);
  const [major, minor, patch] = match.slice(1).map(Number) as [number, number, number];
  return part === 'minor' ? `${major}.${minor + 1}.0` : `${major}.${minor}.${patch + 1}`;
}

/** Orders X.Y.Z versions ascending. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i]! - pb[i]!;
  return 0;
}
