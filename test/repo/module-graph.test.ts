// The server's import graph grouped per module and layer: no upward arrow between layers (platform, below domain,
// below connectors, below the modules, below the console, below the composition) and no two modules that import
// each other. A file-level cycle test (import-cycles.test.ts) cannot see a tie that runs through different files of
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

/** The rules broken: upward arrows (`a -> b`) and two-way ties (`a <-> b`, names sorted), each with an example import. */
function ties(files: Map<string, string[]>): Map<string, string> {
  const edges = unitGraph(files);
  const found = new Map<string, string>();
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

test('no upward arrow between layers and no two modules importing each other, beyond the ties listed with what would undo them', (t) => {
  const files = serverImports();
  t.true(files.size > 200, `read ${files.size} files`);
  const found = ties(files);
  const fresh = [...found].filter(([tie]) => !(tie in KNOWN)).map(([tie, example]) => `${tie}: ${example}`);
  t.deepEqual(fresh, [], 'a new tie between modules or layers');
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
