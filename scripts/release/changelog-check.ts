// The changelog check (`npm run check:changelog`; `npm run release` runs it before writing anything; test/release/changelog.test.ts runs it over
// the real CHANGELOG.md). It reports, each with its line number:
//
// 1. The shape. One `## Unreleased` section, the first `## ` heading of the file. Every other `## ` heading is a
//    release, `## X.Y.Z` or `## X.Y.Z - YYYY-MM-DD`, each version once, newest first. The Unreleased section is
//    empty (right after a release) or made of `### ` subsections, each with at least one list item; every other
//    non-blank line in it is a list item (`- `) or its continuation (indented).
// 2. Repeated headings. Within one section (a release's notes, or Unreleased), a `### ` heading appears once:
//    everything "Added" goes under the one `### Added`.
// 3. Re-announced features. A release's notes announce features by their names in code spans: an operation
//    (`GET /path`), an event type (`dms.document.flagged`), a snake_case name (an error code, a document kind, an
//    enum value: `payload_too_large`, `route_settlement`) or a camelCase field (`cashExpenses`). Those four shapes
//    only: a plain word (`dms`), a header or a scope names no feature of its own. A name is *announced* by the
//    oldest release whose notes carry it. A list item of a later section (Unreleased included) under a heading
//    beginning `Added` that carries a name an older release announced re-announces it, unless the item names that
//    older release's version (as in "announced in 1.1.0"): then it says it builds on it instead of presenting it
//    as new. Items under other headings (Changed, Fixed, Security, ...) may name earlier features freely: changing
//    a feature names it.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareVersions } from './versions.js';

export interface ChangelogProblem {
  line: number;
  message: string;
}

interface Item {
  line: number;
  heading: string | null;
  text: string;
}

interface Section {
  line: number;
  title: string;
  /** X.Y.Z for a release, null for Unreleased. */
  version: string | null;
  headings: { line: number; title: string }[];
  items: Item[];
  /** Lines that are neither a heading, an item nor an item's continuation. */
  stray: number[];
}

const RELEASE = /^## (\d+\.\d+\.\d+)(?: - (\d{4}-\d{2}-\d{2}))?\s*$/;
const FEATURE_NAMES = [
  /^(?:GET|POST|PUT|PATCH|DELETE) \/\S*$/, // an operation
  /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*(?:\.[a-z][a-z0-9]*(?:_[a-z0-9]+)*)+$/, // an event type
  /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/, // snake_case: an error code, a document kind, an enum value
  /^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$/, // camelCase: a field
];

/** The feature names an item's code spans carry (see 3. above). */
export function featureNames(text: string): string[] {
  const names = [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!.trim());
  return [...new Set(names.filter((name) => FEATURE_NAMES.some((shape) => shape.test(name))))];
}

function parse(changelog: string): { sections: Section[]; problems: ChangelogProblem[] } {
  const lines = changelog.split('\n');
  const sections: Section[] = [];
  const problems: ChangelogProblem[] = [];
  let section: Section | null = null;
  let heading: string | null = null;
  let item: Item | null = null;
  lines.forEach((text, index) => {
    const line = index + 1;
    if (text.startsWith('## ')) {
      const release = RELEASE.exec(text);
      const title = text.slice(3).trim();
      if (!release && title !== 'Unreleased')
        problems.push({
          line,
          message: `"${text}" is neither "## Unreleased" nor "## X.Y.Z" / "## X.Y.Z - YYYY-MM-DD"`,
        });
      section = { line, title, version: release?.[1] ?? null, headings: [], items: [], stray: [] };
      sections.push(section);
      heading = null;
      item = null;
      return;
    }
    if (!section) return; // the title and the preamble
    if (text.startsWith('### ')) {
      heading = text.slice(4).trim();
      section.headings.push({ line, title: heading });
      item = null;
    } else if (/^- \S/.test(text)) {
      item = { line, heading, text: text.slice(2) };
      section.items.push(item);
    } else if (text.trim() === '') {
      // blank lines separate; an item continues after one only when indented
    } else if (/^\s+\S/.test(text) && item) {
      item.text += `\n${text.trim()}`;
    } else {
      section.stray.push(line);
    }
  });
  return { sections, problems };
}

/** Every problem the changelog has, in line order; none when it is well formed. */
export function checkChangelog(changelog: string): ChangelogProblem[] {
  const { sections, problems } = parse(changelog);

  const unreleased = sections.filter((s) => s.title === 'Unreleased');
  if (unreleased.length === 0) problems.push({ line: 1, message: 'there is no "## Unreleased" section' });
  for (const extra of unreleased.slice(1))
    problems.push({ line: extra.line, message: 'a second "## Unreleased" section' });
  if (unreleased.length > 0 && sections[0] !== unreleased[0])
    problems.push({
      line: unreleased[0]!.line,
      message: '"## Unreleased" must be the first "## " section, above every release',
    });
  const top = unreleased[0];
  if (top) {
    if (top.items.length > 0 && (top.headings.length === 0 || top.items[0]!.heading === null)) {
      problems.push({
        line: top.items[0]!.line,
        message:
          'the Unreleased notes begin with a list item outside any "### " heading (### Added, ### Changed, ### Fixed, ...)',
      });
    }
    for (const heading of top.headings) {
      if (!top.items.some((i) => i.heading === heading.title && i.line > heading.line))
        problems.push({ line: heading.line, message: `"### ${heading.title}" in Unreleased has no list item` });
    }
    for (const line of top.stray)
      problems.push({
        line,
        message:
          'a line in Unreleased that is not a "### " heading, a "- " list item or an indented continuation of one',
      });
  }

  const releases = sections.filter((s) => s.version !== null);
  const seen = new Map<string, number>();
  releases.forEach((release, index) => {
    const earlier = seen.get(release.version!);
    if (earlier !== undefined)
      problems.push({
        line: release.line,
        message: `${release.version} has a second section (the first is at line ${earlier})`,
      });
    else seen.set(release.version!, release.line);
    const newer = releases[index - 1];
    if (newer && compareVersions(newer.version!, release.version!) <= 0)
      problems.push({
        line: release.line,
        message: `${release.version} comes after ${newer.version}: releases go newest first`,
      });
  });

  for (const section of sections) {
    const first = new Map<string, number>();
    for (const heading of section.headings) {
      const at = first.get(heading.title);
      if (at !== undefined)
        problems.push({
          line: heading.line,
          message: `"### ${heading.title}" again in ${section.title} (first at line ${at}): one heading per kind in a section`,
        });
      else first.set(heading.title, heading.line);
    }
  }

  // Oldest first: the first release that carries a name announces it.
  const announcedBy = new Map<string, string>();
  for (const section of [...sections].reverse()) {
    const ownNames = new Set<string>();
    for (const item of section.items) {
      const names = featureNames(item.text);
      if (item.heading === null || /^Added\b/.test(item.heading)) {
        for (const name of names) {
          const by = announcedBy.get(name);
          if (by !== undefined && by !== section.version && !mentionsVersion(item.text, by)) {
            problems.push({
              line: item.line,
              message: `\`${name}\` was announced in ${by}; this item under "${item.heading ?? section.title}" of ${section.title} announces it again (say what changes under Changed, or name ${by} in the item)`,
            });
          }
        }
      }
      for (const name of names) ownNames.add(name);
    }
    if (section.version !== null)
      for (const name of ownNames) if (!announcedBy.has(name)) announcedBy.set(name, section.version);
  }

  return problems.sort((a, b) => a.line - b.line);
}

function mentionsVersion(text: string, version: string): boolean {
  return new RegExp(`(?<![\\d.])${version.replace(/\./g, '\\.')}(?![\\d.]*\\d)`).test(text);
}

/** The problems as lines for a person: `CHANGELOG.md:LINE: message`. */
export function describeProblems(problems: ChangelogProblem[], file = 'CHANGELOG.md'): string {
  return problems.map((p) => `${file}:${p.line}: ${p.message}`).join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = join(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'), 'CHANGELOG.md');
  const problems = checkChangelog(readFileSync(file, 'utf8'));
  if (problems.length === 0) console.log('CHANGELOG.md passes the changelog check.');
  else {
    console.error(`${describeProblems(problems)}\n${problems.length} problem(s) in CHANGELOG.md`);
    process.exitCode = 1;
  }
}
