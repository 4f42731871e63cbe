// The server's import graph grouped per module and layer: no upward arrow between layers (platform, below domain,
// below connectors, below the modules, below the console, below the composition), no two modules that import
// each other, and no longer circle either (a -> b -> c -> a: stock -> dms -> trips -> stock was one, undone by 0050).
// A file-level cycle test (import-cycles.test.ts) cannot see a tie that runs through different files of
// two modules (credit-notes/documents.ts -> invoices/account.ts while invoices/audit.ts -> credit-notes/audit.ts was
// one). The list of known ties is empty and can only stay so: a new tie fails the suite.
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Lowest first: a unit may import its own layer's units and those below, never one above. */
const LAYERS = ['platform', 'domain', 'connectors', 'modules', 'console', 'composition'] as const;

/**
 * Ties that break a rule today, each with what would undo it: none (decision 0046 says how the last five were undone).
 * Add none: undo a tie by moving what is shared down a layer or into a module of its own, or by declaring it in a
 * manifest for the composed registry.
 */
const KNOWN: Record<string, string> = {};

const RELATIVE_IMPORT = /(?:\bfrom\s+|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The unit a server file belongs to: `modules/<name>` for a module, else its top folder; null outside server/. */
function unitOf(path: string): string | null {
  const module = /^server\/modules\/([^/]+)\//.exec(path);
  if (module) return `modules/${module[1]}`;
  const top = /^server\/([^/]+)\//.exec(path);
  if (top) return top[1]!;
  return path === 'server/main.ts' ? 'composition' : null;
}

const layerOf = (unit: string) =>
  LAYERS.indexOf((unit.startsWith('modules/') ? 'modules' : unit) as (typeof LAYERS)[number]);

/** Unit-to-unit edges, each with one file import that makes it (for the message). */
function unitGraph(files: Map<string, string[]>): Map<string, string> {
  const edges = new Map<string, string>();
  for (const [file, imports] of files) {
    const from = unitOf(file);
    for (const target of imports) {
      const to = unitOf(target);
      if (from === null || to === null || to === from) continue;
      if (!edges.has(`${from} -> ${to}`)) edges.set(`${from} -> ${to}`, `${file} -> ${target}`);
    }
  }
  return edges;
}

/**
 * The circles of three modules or more (a two-way tie is named as one, `a <-> b`): for each strongly connected set of
 * modules (Tarjan's algorithm) of three or more, the shortest circle through its first unit by name, as
 * `a -> b -> c -> a`, with the import that makes each step.
 */
function circles(edges: Map<string, string>): Map<string, string> {
  const next = new Map<string, string[]>();
  for (const edge of [...edges.keys()].sort()) {
    const [from, to] = edge.split(' -> ') as [string, string];
    // Between modules: a circle through another layer has an upward arrow, named as such.
    if (!from.startsWith('modules/') || !to.startsWith('modules/')) continue;
    next.set(from, [...(next.get(from) ?? []), to]);
  }
  const found = new Map<string, string>();
  for (const set of stronglyConnected(next)) {
    if (set.length < 3) continue;
    const start = [...set].sort()[0]!;
    const path = shortestCircle(next, start, new Set(set));
    const steps = path.slice(1).map((to, i) => edges.get(`${path[i]} -> ${to}`)!);
    found.set(path.join(' -> '), steps.join(' | '));
  }
  return found;
}

function stronglyConnected(next: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const sets: string[][] = [];
  const visit = (unit: string) => {
    index.set(unit, index.size);
    low.set(unit, index.get(unit)!);
    stack.push(unit);
    onStack.add(unit);
    for (const to of next.get(unit) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(unit, Math.min(low.get(unit)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(unit, Math.min(low.get(unit)!, index.get(to)!));
    }
    if (low.get(unit) === index.get(unit)) {
      const set: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        set.push(member);
      } while (member !== unit);
      sets.push(set);
    }
  };
  for (const unit of [...next.keys()].sort()) if (!index.has(unit)) visit(unit);
  return sets;
}

/** Breadth first from `start` back to it, inside `set`: the circle's units, `start` first and last. */
function shortestCircle(next: Map<string, string[]>, start: string, set: Set<string>): string[] {
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const unit = queue.shift()!;
    for (const to of next.get(unit) ?? []) {
      if (!set.has(to)) continue;
      if (to === start) {
        const path = [unit];
        while (path[0] !== start) path.unshift(from.get(path[0]!)!);
        return [...path, start];
      }
      if (!from.has(to)) {
        from.set(to, unit);
        queue.push(to);
      }
    }
  }
  throw new Error(`no circle through ${start}`);
}

/**
 * The rules broken: upward arrows (`a -> b`), two-way ties (`a <-> b`, names sorted) and longer circles
 * (`a -> b -> c -> a`), each with the imports that make it.
 */
function ties(files: Map<string, string[]>): Map<string, string> {
  const edges = unitGraph(files);
  const found = circles(edges);
  for (const [edge, example] of edges) {
    const [from, to] = edge.split(' -> ') as [string, string];
    if (layerOf(from) < 0 || layerOf(to) < 0) found.set(edge, `${example} (a folder of server/ that is in no layer)`);
    else if (layerOf(to) > layerOf(from)) found.set(edge, example);
    if (from < to && edges.has(`${to} -> ${from}`))
      found.set(`${from} <-> ${to}`, `${example} | ${edges.get(`${to} -> ${from}`)}`);
  }
  return found;
}

function serverImports(): Map<string, string[]> {
  const files = new Map<string, string[]>();
  for (const file of sourceFiles('server')) {
    const text = readFileSync(join(root, file), 'utf8');
    files.set(
      file,
      [...text.matchAll(RELATIVE_IMPORT)].map((match) =>
        normalize(join(dirname(file), match[1]!.replace(/\.js$/, '.ts'))),
      ),
    );
  }
  return files;
}

test('no upward arrow between layers and no circle between modules (two-way or longer), beyond the ties listed with what would undo them', (t) => {
  const files = serverImports();
  t.true(files.size > 200, `read ${files.size} files`);
  const found = ties(files);
  const fresh = [...found].filter(([tie]) => !(tie in KNOWN)).map(([tie, example]) => `${tie}: ${example}`);
  t.deepEqual(fresh, [], 'a new tie or circle between modules or layers');
  const gone = Object.keys(KNOWN).filter((tie) => !found.has(tie));
  t.deepEqual(gone, [], 'a listed tie is gone: strike it from KNOWN');
});

test('the rules bite: an upward import and a two-way tie between modules are each named, a downward one is not', (t) => {
  const files = new Map<string, string[]>([
    ['server/platform/a.ts', ['server/modules/orders/x.ts']],
    ['server/modules/orders/x.ts', ['server/platform/a.ts', 'server/modules/stock/y.ts']],
    ['server/modules/stock/y.ts', ['server/modules/orders/z.ts', 'server/domain/money.ts']],
    ['server/modules/orders/z.ts', []],
    ['server/domain/money.ts', ['server/platform/a.ts']],
  ]);
  // platform -> orders is upward, and with orders -> platform also a two-way tie; orders <-> stock runs through different files.
  t.deepEqual([...ties(files).keys()].sort(), [
    'modules/orders <-> modules/stock',
    'modules/orders <-> platform',
    'platform -> modules/orders',
  ]);
});

test('the rules bite: a circle of any length between modules is named once, through its first module, with its imports', (t) => {
  const files = new Map<string, string[]>([
    // a -> b -> c -> a, and c -> d -> e -> c beside it: one strongly connected set of five.
    ['server/modules/a/x.ts', ['server/modules/b/x.ts']],
    ['server/modules/b/x.ts', ['server/modules/c/x.ts']],
    ['server/modules/c/x.ts', ['server/modules/a/y.ts', 'server/modules/d/x.ts']],
    ['server/modules/a/y.ts', []],
    ['server/modules/d/x.ts', ['server/modules/e/x.ts']],
    ['server/modules/e/x.ts', ['server/modules/c/y.ts']],
    ['server/modules/c/y.ts', []],
    // f -> g -> h -> i -> f: a circle of four, apart.
    ['server/modules/f/x.ts', ['server/modules/g/x.ts']],
    ['server/modules/g/x.ts', ['server/modules/h/x.ts']],
    ['server/modules/h/x.ts', ['server/modules/i/x.ts']],
    ['server/modules/i/x.ts', ['server/modules/f/x.ts', 'server/domain/money.ts']],
    // j -> k -> l: no circle, and a downward import: nothing.
    ['server/modules/j/x.ts', ['server/modules/k/x.ts']],
    ['server/modules/k/x.ts', ['server/modules/l/x.ts']],
    ['server/modules/l/x.ts', []],
    ['server/domain/money.ts', []],
  ]);
  const found = ties(files);
  t.deepEqual([...found.keys()].sort(), [
    'modules/a -> modules/b -> modules/c -> modules/a',
    'modules/f -> modules/g -> modules/h -> modules/i -> modules/f',
  ]);
  t.is(
    found.get('modules/a -> modules/b -> modules/c -> modules/a'),
    'server/modules/a/x.ts -> server/modules/b/x.ts | server/modules/b/x.ts -> server/modules/c/x.ts | server/modules/c/x.ts -> server/modules/a/y.ts',
  );
  // The import that closes the circle, struck: the circle is gone.
  files.set('server/modules/i/x.ts', ['server/domain/money.ts']);
  t.deepEqual([...ties(files).keys()], ['modules/a -> modules/b -> modules/c -> modules/a']);
});
