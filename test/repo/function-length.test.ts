// No function of server/ is over 60 lines (issue 37 item 5): a posting function reads as its named steps (load,
// check, plan, write, emit; decision 0045), and a step small enough to read at once is one a reviewer can check.
// Measured on the source through the TypeScript parser: every function declaration, method, accessor,
// constructor, function expression and arrow function, in lines that start a statement (with its first and last
// line; see statementLines: a statement the formatter wraps counts once, blank lines and comments not at all),
// nested ones on their own too. The functions that are longer today are listed with their length and why;
// the list can only shrink: a listed function that grew fails, one that got shorter must have its entry lowered (or
// struck at 60 and under), so the figures stay true. A posting function (one that takes the transaction, Tx, in
// server/modules/ or server/domain/) may not be listed at all.
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = process.cwd();
const LIMIT = 60;

/** Functions over the limit today: `file:function` -> its lines now (the most it may have), and why it is left whole. */
const LONGER: Record<string, { lines: number; why: string }> = {
  'server/composition/service.ts:startService': {
    lines: 83,
    why: 'the start-up sequence of a process (database, migrations, jobs, HTTP, console, shutdown) in the order it must run; its parts could be steps of their own, not yet done',
  },
  'server/connectors/accounting/quickbooks-client.ts:createQuickBooksClient': {
    lines: 86,
    why: "a factory: the client's calls are closures over its options and token, each short; the body is mostly those calls",
  },
  'server/platform/jobs/jobs.ts:startJobs': {
    lines: 64,
    why: "a factory: pg-boss started with its queues and the workers' closures over it; not a posting function, not yet cut",
  },
  'server/console/app.ts:consoleApp': {
    lines: 87,
    why: "the console's Express app: one short handler per route, registered in order (sign-in, sessions, CSRF, pages)",
  },
  'server/connectors/fiscal/efris-client.ts:createEfrisClient': {
    lines: 75,
    why: "a factory: the fiscal client's calls are closures over its options and key, each short",
  },
  'server/modules/dms/reconciliation.ts:computeResult': {
    lines: 75,
    why: "a pure read of a day's documents against the DMS's lists and totals (no transaction, no writes); its parts (listed, unlisted, totals) could be steps, not yet done",
  },
  'server/modules/dms/xml/read.ts:readDmsFile': {
    lines: 65,
    why: "a streaming XML reader: the parser's event handlers share the stack of open elements, so they live in the function",
  },
  'server/console/pages/members.ts:memberRoutes': { lines: 73, why: "a page's router: one short handler per route" },
  'server/console/pages/webhooks.ts:webhookRoutes': { lines: 90, why: "a page's router: one short handler per route" },
};

interface MeasuredFunction {
  /** `path:name`; nested functions `outer.inner`, an unnamed one `outer<anonymous>`, a repeated key `#2`, `#3`... */
  key: string;
  lines: number;
  /** Takes the transaction (a parameter typed `Tx` or `Transaction<DB>`). */
  takesTx: boolean;
}

type FunctionNode =
  | ts.FunctionDeclaration
  | ts.MethodDeclaration
  | ts.ArrowFunction
  | ts.FunctionExpression
  | ts.ConstructorDeclaration
  | ts.AccessorDeclaration;

function isFunction(node: ts.Node): node is FunctionNode {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/** A function's own name, or the name of the variable, property or class member it is the value of. */
function nameOf(node: FunctionNode, file: ts.SourceFile): string | undefined {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name) return node.name.getText(file);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText(file);
  return undefined;
}

/** Every function of a file with its length in lines. */
function measure(path: string, source: string): MeasuredFunction[] {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true);
  const found: MeasuredFunction[] = [];
  const seen = new Map<string, number>();
  const visit = (node: ts.Node, owner: string | undefined): void => {
    let inner = owner;
    if (ts.isClassLike(node) && node.name) inner = owner === undefined ? node.name.text : `${owner}.${node.name.text}`;
    if (isFunction(node)) {
      const own = nameOf(node, file);
      inner = own === undefined ? `${owner ?? ''}<anonymous>` : owner === undefined ? own : `${owner}.${own}`;
      const count = (seen.get(inner) ?? 0) + 1;
      seen.set(inner, count);
      const lines = statementLines(node, file);
      const takesTx = node.parameters.some((parameter) =>
        /^(Tx|Transaction<DB>)$/.test(parameter.type?.getText(file) ?? ''),
      );
      found.push({ key: `${path}:${inner}${count > 1 ? `#${count}` : ''}`, lines, takesTx });
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  visit(file, undefined);
  return found;
}

/**
 * A function's length: its first and last lines and every line on which one of its statements starts (those of
 * its nested functions too). A statement the formatter wraps over several lines (a long call, a query's chain, an
 * object literal) counts once, as a blank line or a comment does not count: the measure is of the steps a reader
 * goes through, so the formatter's line width (decision 0044) cannot move it.
 */
function statementLines(fn: ts.Node, file: ts.SourceFile): number {
  const lineOf = (node: ts.Node) => file.getLineAndCharacterOfPosition(node.getStart(file)).line;
  const starts = new Set<number>([lineOf(fn), file.getLineAndCharacterOfPosition(fn.getEnd()).line]);
  const walk = (node: ts.Node): void => {
    if ((ts.isStatement(node) && !ts.isBlock(node)) || ts.isCaseClause(node) || ts.isDefaultClause(node))
      starts.add(lineOf(node));
    ts.forEachChild(node, walk);
  };
  ts.forEachChild(fn, walk);
  return starts.size;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

const isPostingPlace = (key: string) => key.startsWith('server/modules/') || key.startsWith('server/domain/');

/** What breaks the rule: a function over the limit and not listed, over its listed length, or a posting function listed; a listed entry that is stale. */
function judge(functions: readonly MeasuredFunction[], listed: Readonly<Record<string, { lines: number }>>): string[] {
  const byKey = new Map(functions.map((fn) => [fn.key, fn]));
  const problems: string[] = [];
  for (const fn of functions) {
    if (fn.lines <= LIMIT) continue;
    const entry = listed[fn.key];
    if (entry === undefined)
      problems.push(`${fn.key} is ${fn.lines} lines (at most ${LIMIT}): cut it into named steps`);
    else if (fn.lines > entry.lines)
      problems.push(`${fn.key} grew to ${fn.lines} lines from its listed ${entry.lines}`);
    if (entry !== undefined && fn.takesTx && isPostingPlace(fn.key))
      problems.push(`${fn.key} takes the transaction: a posting function may not be on the list`);
  }
  for (const [key, entry] of Object.entries(listed)) {
    const fn = byKey.get(key);
    if (fn === undefined) problems.push(`${key} is listed but there is no such function: strike it`);
    else if (fn.lines <= LIMIT) problems.push(`${key} is ${fn.lines} lines now: strike it from the list`);
    else if (fn.lines < entry.lines)
      problems.push(`${key} is ${fn.lines} lines now: lower its entry from ${entry.lines}`);
  }
  return problems;
}

test(`no function of server/ is over ${LIMIT} lines, beyond the ones listed (which may only shrink)`, (t) => {
  const functions = sourceFiles('server').flatMap((path) =>
    measure(relative(root, join(root, path)), readFileSync(join(root, path), 'utf8')),
  );
  // The measure is the real one: it reads every file and finds the posting functions it is about.
  t.true(functions.length > 2000, `measured ${functions.length} functions`);
  const processReturn = functions.find((fn) => fn.key === 'server/modules/returns/documents.ts:processReturn');
  t.true(processReturn?.takesTx, 'processReturn is found and takes the transaction');
  t.deepEqual(judge(functions, LONGER), []);
});

test('the measure bites: a long function, a long nested one and a listed posting function are named; a stale entry is named', (t) => {
  const body = (n: number) => Array.from({ length: n - 2 }, (_, i) => `  const a${i} = ${i};`).join('\n');
  const source = [
    `export async function post(tx: Tx, actor: Actor) {\n${body(61)}\n}`,
    `export function short() {\n${body(60)}\n}`,
    `export const outer = () => {\n  const inner = function () {\n${body(61)}\n  };\n};`,
    'class Client {\n  send(): void {}\n  send(): void {}\n}',
  ].join('\n');
  const functions = measure('server/modules/x/documents.ts', source);
  const lines = Object.fromEntries(functions.map((fn) => [fn.key, fn.lines]));
  t.is(lines['server/modules/x/documents.ts:post'], 61);
  t.is(lines['server/modules/x/documents.ts:short'], 60);
  t.is(lines['server/modules/x/documents.ts:outer'], 62, "its first and last line, its one statement and inner's 59");
  t.is(lines['server/modules/x/documents.ts:outer.inner'], 61);
  t.is(lines['server/modules/x/documents.ts:Client.send#2'], 1, 'a repeated name gets its own key');
  // One statement wrapped over 84 lines, with a comment and a blank line: its first line, its statement, its last.
  const wrapped = measure(
    'server/x.ts',
    `export function wrapped() {\n  // why\n\n  return call(\n${Array.from({ length: 80 }, (_, i) => `    ${i},`).join('\n')}\n  );\n}`,
  );
  t.is(wrapped[0]!.lines, 3, 'a wrapped statement counts once, a comment and a blank line not at all');
  t.true(functions.find((fn) => fn.key.endsWith(':post'))!.takesTx);
  t.deepEqual(judge(functions, {}), [
    'server/modules/x/documents.ts:post is 61 lines (at most 60): cut it into named steps',
    'server/modules/x/documents.ts:outer is 62 lines (at most 60): cut it into named steps',
    'server/modules/x/documents.ts:outer.inner is 61 lines (at most 60): cut it into named steps',
  ]);
  t.deepEqual(
    judge(functions, {
      'server/modules/x/documents.ts:post': { lines: 61 },
      'server/modules/x/documents.ts:outer': { lines: 70 },
      'server/modules/x/documents.ts:outer.inner': { lines: 60 },
      'server/modules/x/documents.ts:short': { lines: 60 },
    }),
    [
      'server/modules/x/documents.ts:post takes the transaction: a posting function may not be on the list',
      'server/modules/x/documents.ts:outer.inner grew to 61 lines from its listed 60',
      'server/modules/x/documents.ts:outer is 62 lines now: lower its entry from 70',
      'server/modules/x/documents.ts:short is 60 lines now: strike it from the list',
    ],
  );
});
