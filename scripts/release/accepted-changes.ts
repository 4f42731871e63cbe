// spec/releases/accepted-changes.yaml: the breaking changes deliberately accepted since the newest release,
// each with its reason and the CHANGELOG line that announces it. The breaking-change check lets exactly
// these through and stays strict for anything else; see the file's header for the rules.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { BreakingChange } from './breaking-changes.js';
import { RELEASES_DIR } from './releases.js';

export const ACCEPTED_CHANGES_FILE = join(RELEASES_DIR, 'accepted-changes.yaml');

export interface AcceptedChange {
  /** As check:breaking prints it; `*` stands for any text. */
  where: string;
  /** Exactly as check:breaking prints it. */
  what: string;
  reason: string;
  /** The text the CHANGELOG's Unreleased section must carry, word for word, before a release. */
  changelog: string;
}

export interface AcceptedChanges {
  /** The release the entries are measured against. */
  since: string;
  changes: AcceptedChange[];
}

export function readAcceptedChanges(root: string): AcceptedChanges {
  const file = join(root, ACCEPTED_CHANGES_FILE);
  const raw = parse(readFileSync(file, 'utf8')) as Partial<AcceptedChanges> | null;
  if (typeof raw?.since !== 'string') throw new Error(`${ACCEPTED_CHANGES_FILE} has no \`since\` version`);
  const changes = (raw.changes ?? []) as AcceptedChange[];
  changes.forEach((entry, index) => {
    for (const field of ['where', 'what', 'reason', 'changelog'] as const) {
      if (typeof entry?.[field] !== 'string' || entry[field].trim() === '') {
        throw new Error(
          `${ACCEPTED_CHANGES_FILE}: entry ${index + 1} has no ${field}; every accepted change needs where, what, a reason and its changelog line`,
        );
      }
    }
  });
  return { since: raw.since, changes };
}

/** After a release to `version`, nothing is accepted yet against the new snapshot. */
export function emptiedAcceptedChanges(text: string, version: string): string {
  const header = text.slice(0, text.search(/^since:/m));
  return `${header}since: ${version}\nchanges: []\n`;
}

const matches = (pattern: string, text: string) =>
  new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  ).test(text);

export interface Verdict {
  /** Breaking changes no entry accepts: these fail the check. */
  refused: BreakingChange[];
  /** Breaking changes an entry accepts, with that entry. */
  accepted: { change: BreakingChange; by: AcceptedChange }[];
  /** Entries that match no change: stale, so they fail the check too. */
  unused: AcceptedChange[];
}

export function judge(changes: BreakingChange[], accepted: AcceptedChange[]): Verdict {
  const verdict: Verdict = { refused: [], accepted: [], unused: [] };
  const used = new Set<AcceptedChange>();
  for (const change of changes) {
    const by = accepted.find((entry) => entry.what === change.what && matches(entry.where, change.where));
    if (by) {
      used.add(by);
      verdict.accepted.push({ change, by });
    } else {
      verdict.refused.push(change);
    }
  }
  verdict.unused = accepted.filter((entry) => !used.has(entry));
  return verdict;
}

/** The entries whose changelog line the Unreleased notes lack. */
export function unannounced(accepted: AcceptedChange[], unreleasedNotes: string): AcceptedChange[] {
  return accepted.filter((entry) => !unreleasedNotes.includes(entry.changelog));
}

/** Judges the changes against the accepted list, which applies only when it is measured against `baseVersion`. */
export function judgeAgainst(
  root: string,
  baseVersion: string,
  changes: BreakingChange[],
): Verdict & { since: string } {
  const list = readAcceptedChanges(root);
  return { ...judge(changes, list.since === baseVersion ? list.changes : []), since: list.since };
}
