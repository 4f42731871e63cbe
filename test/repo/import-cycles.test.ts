// No import circles in server/: a file that imports, through others, a file that imports it has no order in which
// its modules can be read, and ESM then hands one of them an uninitialised binding (issue 20 broke the circle of
// five webhook files by giving their shared types a file of their own). Checked on the source: relative imports
// (type-only ones too, since they tie the files' designs together just the same) parsed with a regex, cycles found
// by a depth-first search.
import test from 'ava';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** `from './x.js'` (import and export, over several lines too), `import './x.js'` and `import('./x.js')`. */
const RELATIVE_IMPORT = /(?:\bfrom\s+|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

/** The relative imports of a file's text, as repository paths of .ts files. */
function importsOf(path: string, text: string): string[] {
  const targets = [...text.matchAll(RELATIVE_IMPORT)].map((match) =>
    normalize(join(dirname(path), match[1]!.replace(/\.js$/, '.ts'))),
  );
  return [...new Set(targets)];
}

/** Every cycle the depth-first search closes (one per back edge), as the path round it: a -> b -> a. */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const done = new Set<string>();
  const onPath: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string) => {
    onPath.push(file);
    for (const next of graph.get(file) ?? []) {
      const at = onPath.indexOf(next);
      if (at >= 0) cycles.push([...onPath.slice(at), next]);
      else if (!done.has(next)) visit(next);
    }
    onPath.pop();
    done.add(file);
  };
  for (const file of [...graph.keys()].sort()) if (!done.has(file)) visit(file);
  return cycles;
}

/** server/'s files and the server/ files each imports (imports of generated/ lead out of the tree), and any import that names no file. */
function serverGraph(): { graph: Map<string, string[]>; unresolved: string[] } {
  const files = sourceFiles('server').map((path) => relative(root, join(root, path)));
  const known = new Set(files);
  const imports = new Map(files.map((path) => [path, importsOf(path, readFileSync(join(root, path), 'utf8'))]));
  const unresolved = [...imports].flatMap(([path, targets]) =>
    targets.filter((target) => !existsSync(join(root, target))).map((target) => `${path} -> ${target}`),
  );
  return {
    graph: new Map([...imports].map(([path, targets]) => [path, targets.filter((target) => known.has(target))])),
    unresolved,
  };
}

test('the search finds a circle when there is one, and none in a graph without', (t) => {
  const circle = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts', 'd.ts']],
    ['d.ts', []],
  ]);
  t.deepEqual(findCycles(circle), [['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  const diamond = new Map([
    ['a.ts', ['b.ts', 'c.ts']],
    ['b.ts', ['d.ts']],
    ['c.ts', ['d.ts']],
    ['d.ts', []],
  ]);
  t.deepEqual(findCycles(diamond), []);
});

test('the parser reads type-only, re-exported, multi-line, side-effect and dynamic imports', (t) => {
  const text = [
    "import type { Tx } from '../database/transaction.js';",
    "export { DELIVERY_QUEUE } from './types.js';",
    'import {\n  a,\n  b,\n} from "./attempt.js";',
    "import './side-effect.js';",
    "const lazy = await import('./lazy.js');",
    "import pino from 'pino';",
  ].join('\n');
  t.deepEqual(importsOf('server/platform/webhooks/deliver.ts', text), [
    'server/platform/database/transaction.ts',
    'server/platform/webhooks/types.ts',
    'server/platform/webhooks/attempt.ts',
    'server/platform/webhooks/side-effect.ts',
    'server/platform/webhooks/lazy.ts',
  ]);
});

test('no file of server/ imports itself through others (the webhook engine included)', (t) => {
  const { graph, unresolved } = serverGraph();
  // The graph is the real one: every import names a .ts file (none is lost to the parser), and the delivery job composes the attempt.
  t.deepEqual(unresolved, []);
  t.true(graph.get('server/platform/webhooks/deliver.ts')?.includes('server/platform/webhooks/attempt.ts'));
  const cycles = findCycles(graph).map((cycle) => cycle.join(' -> '));
  t.deepEqual(
    cycles.filter((cycle) => cycle.includes('server/platform/webhooks/')),
    [],
    'the webhook engine has no import circle',
  );
  t.deepEqual(cycles, []);
});
