// CHANGELOG.md: an `## Unreleased` section on top, then one `## X.Y.Z` (or `## X.Y.Z - YYYY-MM-DD`) section per
// release, newest first. A release moves what Unreleased holds into a new dated section.

const RELEASE_HEADING = /^## (\d+\.\d+\.\d+)(?: - (\d{4}-\d{2}-\d{2}))?\s*$/m;
const UNRELEASED_HEADING = /^## Unreleased\s*$/m;

/** The newest released version (the first `## X.Y.Z` heading), or undefined. */
export function topReleasedVersion(changelog: string): string | undefined {
  return RELEASE_HEADING.exec(changelog)?.[1];
}

/** Every released version, newest first. */
export function releasedVersions(changelog: string): string[] {
  return [...changelog.matchAll(new RegExp(RELEASE_HEADING.source, 'gm'))].map((m) => m[1]!);
}

/** What the Unreleased section says (its text between its heading and the next `## `), trimmed. */
export function unreleasedNotes(changelog: string): string {
  const start = UNRELEASED_HEADING.exec(changelog);
  if (!start) throw new Error('CHANGELOG.md has no "## Unreleased" section');
  const rest = changelog.slice(start.index + start[0].length);
  const end = rest.search(/^## /m);
  return (end === -1 ? rest : rest.slice(0, end)).trim();
}

/** The changelog with Unreleased emptied and its notes under `## <version> - <date>`. */
export function releaseChangelog(changelog: string, version: string, date: string): string {
  const notes = unreleasedNotes(changelog);
  if (notes === '') throw new Error('The Unreleased section of CHANGELOG.md is empty: there is nothing to release');
  if (releasedVersions(changelog).includes(version))
    throw new Error(`CHANGELOG.md already has a section for ${version}`);
  const start = UNRELEASED_HEADING.exec(changelog)!;
  const rest = changelog.slice(start.index + start[0].length);
  const end = rest.search(/^## /m);
  const after = end === -1 ? '' : rest.slice(end);
  return `${changelog.slice(0, start.index)}## Unreleased\n\n## ${version} - ${date}\n\n${notes}\n\n${after}`.replace(
    /\n+$/,
    '\n',
  );
}
