// The fenced code blocks of the documentation, classified for test/docs/samples.test.ts, and the comparison of a
// block's output with the output the text shows. The conventions (also in README.md, "Documentation that runs"):
// - ```sh / ```bash blocks run with bash -euo pipefail, ```ts blocks as ES modules; other blocks are not run.
// - `<!-- doc-test: skip (reason) -->` on the line before a fence: that block is not run; the reason is required.
// - `<!-- doc-test: output -->` before a block: the block shows what the nearest run block above it prints on
//   stdout. `...` inside a line stands for any text on that line; a line that is only `...` for any lines.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export type Kind = 'shell' | 'ts' | 'other';

export interface CodeBlock {
  /** Path relative to the repository, e.g. `client-sdk/README.md`. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word (`sh`, `ts`, `text`, ... or '' for none). */
  lang: string;
  kind: Kind;
  code: string;
  skip?: string;
  /** The output the text shows for this block (set on run blocks), with the line of its fence. */
  expected?: { text: string; line: number };
}

const runnable: Record<string, Kind> = { sh: 'shell', bash: 'shell', ts: 'ts' };
/** Spellings that look runnable but are not one of the above: refused, so that no sample silently escapes. */
const ambiguous = ['shell', 'console', 'zsh', 'typescript', 'tsx', 'mts'];

/** The documentation files whose blocks are run: the two READMEs, ARCHITECTURE.md and every Markdown file under docs/. */
export function documentationFiles(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : name.endsWith('.md') ? [path] : [];
    });
  return [
    'README.md',
    'client-sdk/README.md',
    'ARCHITECTURE.md',
    ...walk(join(root, 'docs'))
      .map((p) => relative(root, p))
      .sort(),
  ];
}

/** Every fenced block of a Markdown text, with its doc-test directive; throws on a misused directive or fence. */
export function codeBlocks(file: string, markdown: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  let directive: { text: string; line: number } | undefined;
  const outputOf = new Map<CodeBlock, CodeBlock>();
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    const comment = /^<!--\s*doc-test:(.*?)-->\s*$/.exec(text.trim());
    if (text.trim().startsWith('<!--') && text.includes('doc-test') && !comment)
      throw new Error(
        `${file}:${i + 1}: a doc-test directive is one line: <!-- doc-test: skip (reason) --> or <!-- doc-test: output -->`,
      );
    if (comment) {
      directive = { text: comment[1]!.trim(), line: i + 1 };
      continue;
    }
    const open = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/.exec(text);
    if (!open) {
      if (directive && text.trim() !== '')
        throw new Error(`${file}:${directive.line}: the doc-test directive must come right before a fenced block`);
      continue;
    }
    const fence = open[1]!;
    const lang = open[2]!.toLowerCase();
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !new RegExp(`^ {0,3}${fence[0]}{${fence.length},}\\s*$`).test(lines[j]!); j++)
      body.push(lines[j]!);
    if (j === lines.length) throw new Error(`${file}:${i + 1}: the block is never closed`);
    if (ambiguous.includes(lang))
      throw new Error(
        `${file}:${i + 1}: write \`\`\`sh, \`\`\`bash or \`\`\`ts for a sample that runs (or \`\`\`text), not \`\`\`${lang}`,
      );
    const block: CodeBlock = { file, line: i + 1, lang, kind: runnable[lang] ?? 'other', code: body.join('\n') + '\n' };
    if (directive) {
      const skip = /^skip\s*\((.+)\)$/.exec(directive.text);
      if (skip) {
        if (block.kind === 'other')
          throw new Error(
            `${file}:${directive.line}: only a sh, bash or ts block can be skipped (this one is \`\`\`${lang}, which never runs)`,
          );
        block.skip = skip[1]!.trim();
      } else if (directive.text === 'output') {
        const previous = blocks.at(-1);
        const owner = previous && outputOf.get(previous);
        if (owner) throw new Error(`${file}:${directive.line}: ${file}:${owner.line} already has its output block`);
        if (!previous || previous.kind === 'other' || previous.skip)
          throw new Error(`${file}:${directive.line}: an output block must follow a sh, bash or ts block that runs`);
        if (block.kind !== 'other')
          throw new Error(
            `${file}:${directive.line}: an output block is \`\`\`text (or unlabelled), not \`\`\`${lang}`,
          );
        previous.expected = { text: block.code, line: block.line };
        outputOf.set(block, previous);
      } else {
        throw new Error(
          `${file}:${directive.line}: unknown doc-test directive "${directive.text}" (skip (reason) or output)`,
        );
      }
      directive = undefined;
    }
    blocks.push(block);
    i = j;
  }
  if (directive)
    throw new Error(`${file}:${directive.line}: the doc-test directive must come right before a fenced block`);
  return blocks;
}

const outputLines = (text: string) => {
  const lines = text
    .replace(/\r/g, '')
    .split('\n')
    .map((l) => l.trimEnd());
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  return lines;
};

const linePattern = (expected: string) =>
  new RegExp(
    `^${expected
      .split('...')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    's',
  );

/** Null when `actual` is what `expected` shows; otherwise a message naming the first line that differs. */
export function compareOutput(expected: string, actual: string): string | null {
  const want = outputLines(expected);
  const got = outputLines(actual);
  const matches = (w: number, g: number): boolean => {
    if (w === want.length) return g === got.length;
    if (want[w] === '...') {
      for (let k = g; k <= got.length; k++) if (matches(w + 1, k)) return true;
      return false;
    }
    return g < got.length && linePattern(want[w]!).test(got[g]!) && matches(w + 1, g + 1);
  };
  if (matches(0, 0)) return null;
  // Where the match breaks, for the message: lines follow each other, except after a line of `...`.
  let g = 0;
  let free = false;
  for (let w = 0; w < want.length; w++) {
    if (want[w] === '...') {
      free = true;
      continue;
    }
    const pattern = linePattern(want[w]!);
    const found = free
      ? got.findIndex((line, k) => k >= g && pattern.test(line))
      : g < got.length && pattern.test(got[g]!)
        ? g
        : -1;
    if (found === -1) {
      return `expected output line ${w + 1} \`${want[w]}\` is not printed${free ? ` (after printed line ${g})` : g < got.length ? ` (printed line ${g + 1} is \`${got[g]}\`)` : ' (nothing more was printed)'}`;
    }
    g = found + 1;
    free = false;
  }
  return `more was printed than the text shows, from line ${g + 1}: \`${got[g] ?? ''}\``;
}

/**
 * The curl commands of a shell block that neither fail on an HTTP error (-f, --fail, --fail-with-body) nor have
 * their answer shown in an output block: such a sample would "pass" on a 404.
 */
export function uncheckedCurls(block: CodeBlock): string[] {
  if (block.expected) return [];
  const commands = block.code
    .replace(/\\\n/g, ' ')
    .split('\n')
    .flatMap((line) => line.split(/[|;&]+/));
  return commands
    .map((command) => command.replace(/#.*$/, '').trim())
    .filter((command) => /(^|\s|\$\()curl\s/.test(command))
    .filter((command) => !/(^|\s)(--fail(-with-body)?|-[a-zA-Z]*f[a-zA-Z]*)(\s|$)/.test(command));
}
