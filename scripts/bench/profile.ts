// Where a process's CPU went while the bench drove it (issue 40): the service is started with Node's `--cpu-prof`,
// driven, stopped, and the profile it wrote on exit is read here. Only the samples of the measured window are
// counted (the start, the warm-up and the stop are cut off), each sample's time is given to the function on top of
// the stack (self time), and functions are grouped by where their code lives: a package of node_modules, a file of
// the service, a part of Node itself, or V8's own entries (garbage collection, "(program)": native code outside
// JavaScript, much of it the socket's system calls).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Milliseconds sampled busy in the window (idle excluded; on a loaded machine, waits for a core included). */
  busyMs: number;
  /** Wall milliseconds of the window. */
  windowMs: number;
  /** Groups by self time, largest first: share of busy time. */
  groups: { group: string; share: number }[];
  /** Each sample charged to the nearest piece on its stack (see PIECES), largest first: shares of busy time, adding up to 1. */
  pieces: { piece: string; share: number }[];
}

/**
 * The pieces a sample is charged to: walking its stack from the top, the first frame that belongs to one of these
 * takes the sample. So V8's built-ins (writev, JSON.stringify, ...) are charged to whoever called them, and a
 * middleware is charged its own work, not the rest of the chain it calls through `next()`: the shares add up to the
 * whole. A stack with none of these is charged to the group of its top frame.
 */
const PIECES: { piece: string; matches: (frame: ProfileNode['callFrame']) => boolean }[] = [
  { piece: 'garbage collection', matches: (f) => f.functionName === '(garbage collector)' },
  { piece: 'native code outside JavaScript ((program))', matches: (f) => f.functionName === '(program)' },
  {
    // Promise hooks: on from the first AsyncLocalStorage.run of the process (the transaction owner's, transaction.ts),
    // after which every promise pays them (Node 20).
    piece: 'async context hooks (AsyncLocalStorage)',
    matches: (f) => f.url === 'node:internal/async_hooks' || f.url === 'node:async_hooks',
  },
  { piece: 'JSON.stringify / JSON.parse', matches: (f) => f.url === '' && /^(stringify|parse)$/.test(f.functionName) },
  {
    piece: 'socket writes and reads (node:net, stream_base)',
    matches: (f) =>
      /^node:(net|internal\/stream_base_commons)$/.test(f.url) ||
      (f.url === '' && /^(writev|writeBuffer|writeUtf8String|writeLatin1String|onStreamRead)$/.test(f.functionName)),
  },
  { piece: 'node:http (parser, headers, response)', matches: (f) => /^node:_http_/.test(f.url) },
  {
    piece: 'OpenAPI validator (express-openapi-validator, ajv)',
    matches: (f) =>
      /\/node_modules\/(express-openapi-validator|ajv|ajv-formats)\//.test(f.url) ||
      f.url.endsWith('/platform/http/openapi-validator.ts'),
  },
  {
    piece: 'keyless budget per address (address-budget.ts)',
    matches: (f) => f.url.endsWith('/access/address-budget.ts'),
  },
  { piece: 'authentication and rate limit (access/)', matches: (f) => /\/platform\/access\//.test(f.url) },
  { piece: 'API log (api-log.ts)', matches: (f) => f.url.endsWith('/platform/http/api-log.ts') },
  { piece: 'idempotency (idempotency.ts)', matches: (f) => f.url.endsWith('/platform/http/idempotency.ts') },
  { piece: 'other HTTP pipeline (server/platform/http)', matches: (f) => /\/server\/platform\/http\//.test(f.url) },
  { piece: 'Kysely (build, compile, results)', matches: (f) => f.url.includes('/node_modules/kysely/') },
  {
    piece: 'pg (driver and protocol)',
    matches: (f) => /\/node_modules\/(pg|pg-protocol|pg-pool|pg-types|postgres-date|postgres-array)\//.test(f.url),
  },
  { piece: 'pg-boss', matches: (f) => f.url.includes('/node_modules/pg-boss/') },
  {
    piece: 'worker loops and heartbeat (platform/jobs, events, webhooks)',
    matches: (f) => /\/server\/platform\/(jobs|events|webhooks)\//.test(f.url),
  },
  {
    piece: 'pino (logging)',
    matches: (f) => /\/node_modules\/(pino|pino-std-serializers|sonic-boom|thread-stream)\//.test(f.url),
  },
  { piece: 'decimal.js', matches: (f) => f.url.includes('/node_modules/decimal.js/') },
  { piece: 'crypto (hashes, HMAC)', matches: (f) => f.url.startsWith('node:internal/crypto') },
  {
    piece: 'express and router',
    matches: (f) =>
      /\/node_modules\/(express|router|parseurl|path-to-regexp|finalhandler|send|qs|on-finished|content-type|type-is|body-parser|raw-body)\//.test(
        f.url,
      ),
  },
  { piece: "the module's own code (server/modules)", matches: (f) => /\/server\/modules\//.test(f.url) },
  { piece: 'other service code (server/)', matches: (f) => /\/server\//.test(f.url) },
  { piece: "the baseline's own code (scripts/bench)", matches: (f) => /\/scripts\/bench\//.test(f.url) },
];

/** Reads the one profile `--cpu-prof-dir=dir` holds and sums the samples between `from` and `to` (µs before its end). */
export function readProfile(dir: string, root: string, window: { fromEndUs: number; toEndUs: number }): ProfileSummary {
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no .cpuprofile in ${dir}: did the process exit by itself?`);
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  toSources(profile);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const from = profile.endTime - window.fromEndUs;
  const to = profile.endTime - window.toEndUs;
  const self = new Map<string, number>();
  const piece = new Map<string, number>();
  let busy = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i += 1) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at < from || at > to) continue;
    const node = byId.get(profile.samples[i]!)!;
    if (node.callFrame.functionName === '(idle)') continue;
    busy += delta;
    const group = groupOf(node.callFrame, root);
    self.set(group, (self.get(group) ?? 0) + delta);
    let charged: string | undefined;
    for (let id: number | undefined = node.id; id !== undefined && charged === undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame;
      charged = PIECES.find((p) => p.matches(frame))?.piece;
    }
    charged ??= `other: ${group}`;
    piece.set(charged, (piece.get(charged) ?? 0) + delta);
  }
  const share = (us: number) => (busy > 0 ? us / busy : 0);
  return {
    busyMs: busy / 1000,
    windowMs: (to - from) / 1000,
    groups: [...self].sort((a, b) => b[1] - a[1]).map(([group, us]) => ({ group, share: share(us) })),
    pieces: [...piece].sort((a, b) => b[1] - a[1]).map(([name, us]) => ({ piece: name, share: share(us) })),
  };
}

/**
 * The service runs compiled (dist/server-main.mjs, as `npm start`): every frame of the bundle is put back at its
 * source file through the bundle's source map, so that the pieces name our files as when it runs from the sources.
 */
function toSources(profile: CpuProfile): void {
  const maps = new Map<string, { map: SourceMap; base: string } | null>();
  for (const node of profile.nodes) {
    const { url, lineNumber, columnNumber } = node.callFrame;
    if (!url.startsWith('file://') || !url.endsWith('.mjs')) continue;
    let entry = maps.get(url);
    if (entry === undefined) {
      const mapFile = `${fileURLToPath(url)}.map`;
      entry = existsSync(mapFile) ? { map: new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8'))), base: url } : null;
      maps.set(url, entry);
    }
    if (!entry || lineNumber < 0) continue;
    const found = entry.map.findEntry(lineNumber, columnNumber) as { originalSource?: string };
    if (found.originalSource) node.callFrame.url = new URL(found.originalSource, entry.base).href;
  }
}

/** A package of node_modules, a file of ours (relative), a module of Node, or V8's own entry. */
function groupOf(frame: ProfileNode['callFrame'], root: string): string {
  const { url, functionName } = frame;
  if (url === '') return functionName.startsWith('(') ? functionName : `V8 built-in ${functionName || '(anonymous)'}`;
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  if (url.startsWith('file://')) return relative(root, new URL(url).pathname);
  return url;
}

/** Lines of a summary: the top self-time groups and the pieces. */
export function profileLines(title: string, summary: ProfileSummary, top = 8): string[] {
  const pct = (share: number) => `${(share * 100).toFixed(1).padStart(5)} %`;
  return [
    `${title}: ${summary.busyMs.toFixed(0)} ms busy sampled in ${summary.windowMs.toFixed(0)} ms`,
    '  self time by where the code lives (top frames only):',
    ...summary.groups.slice(0, top).map((g) => `    ${pct(g.share)}  ${g.group}`),
    '  charged to the nearest piece on the stack (adds up to 100 %; 1 % and more):',
    ...summary.pieces.filter((p) => p.share >= 0.01).map((p) => `    ${pct(p.share)}  ${p.piece}`),
  ];
}

/**
 * Several profiles side by side in µs of CPU per request: each piece's share of the process's CPU per request, one
 * column per target, PostgreSQL's CPU per request as a last row (issue 40: where `/health`'s time went against bare
 * express's). Pieces under 1 % in every column are summed as "the rest". The first column decides the order.
 */
export function pieceComparison(
  title: string,
  columns: { label: string; cpuUs: number; postgresUs: number; summary: ProfileSummary }[],
): string[] {
  const usOf = (column: (typeof columns)[number], piece: string) =>
    (column.summary.pieces.find((p) => p.piece === piece)?.share ?? 0) * column.cpuUs;
  const pieces = [...new Set(columns.flatMap((c) => c.summary.pieces.map((p) => p.piece)))];
  const shown = pieces
    .filter((piece) => columns.some((c) => (c.summary.pieces.find((p) => p.piece === piece)?.share ?? 0) >= 0.01))
    .sort((a, b) => usOf(columns[0]!, b) - usOf(columns[0]!, a));
  const width = Math.max(...shown.map((piece) => piece.length), 'PostgreSQL (every backend)'.length) + 2;
  const cell = (text: string) => text.padStart(Math.max(10, ...columns.map((c) => c.label.length)) + 2);
  const row = (name: string, values: number[]) =>
    `  ${name.padEnd(width)}${values.map((value) => cell(value.toFixed(0))).join('')}`;
  const rest = columns.map((c) => c.cpuUs - shown.reduce((sum, piece) => sum + usOf(c, piece), 0));
  return [
    `${title}:`,
    `  ${''.padEnd(width)}${columns.map((c) => cell(c.label)).join('')}`,
    ...shown.map((piece) =>
      row(
        piece,
        columns.map((c) => usOf(c, piece)),
      ),
    ),
    row('the rest (each under 1 %)', rest),
    row(
      'the process, all',
      columns.map((c) => c.cpuUs),
    ),
    row(
      'PostgreSQL (every backend)',
      columns.map((c) => c.postgresUs),
    ),
    row(
      'together',
      columns.map((c) => c.cpuUs + c.postgresUs),
    ),
  ];
}
