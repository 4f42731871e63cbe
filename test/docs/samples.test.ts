// Documentation that runs: every ```sh, ```bash and ```ts block of README.md, client-sdk/README.md,
// ARCHITECTURE.md and docs/**/*.md runs, in the order of the text, against one service started as `npm start`
// starts it on a fresh data directory. A block passes when it exits 0 within its time limit and prints what the
// text shows after it. Conventions (test/docs/code-blocks.ts has the details):
// - Samples read the service's address and key from ERP_BASE_URL and ERP_API_KEY, which `npm start` prints as
//   two `export` lines; this test takes them from those lines. The operator CLI gets the service's DATA_DIR and
//   EMBEDDED_POSTGRES_PORT, so `npm run --silent admin -- ...` works on the same database.
// - Shell blocks run with `bash -euo pipefail` in the repository; a `curl` must fail on an HTTP error (-f,
//   --fail, --fail-with-body) unless an output block shows its answer (a sample that shows an error says its
//   status). TypeScript blocks run as ES modules in a scratch project where '@distributor-erp/sdk' maps to
//   client-sdk/src, and all of them are type-checked once with tsc, strict. They are compiled by one esbuild run
//   (what tsx does to each file it loads, tsx being esbuild underneath) and each runs with plain `node`: a
//   `node --import tsx` per block started tsx's loader and transpiled the SDK again in every block (issue 35).
// - `<!-- doc-test: skip (reason) -->` right before a block: not run; the skips are listed with their reasons.
// - `<!-- doc-test: output -->` right before a ```text block: it is the stdout of the run block above it;
//   `...` inside a line stands for any text, a line of only `...` for any lines.
import test from 'ava';
import { execFile, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as esbuild from 'esbuild';
import { freePort } from '../../scripts/lib/free-port.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { codeBlocks, compareOutput, documentationFiles, uncheckedCurls, type CodeBlock } from './code-blocks.js';

const root = process.cwd();
const blockTimeoutMs = 60_000;
const exec = promisify(execFile);

let blocks: CodeBlock[] = [];
let parseError: string | undefined;
try {
  blocks = documentationFiles(root).flatMap((file) => codeBlocks(file, readFileSync(join(root, file), 'utf8')));
} catch (error) {
  parseError = (error as Error).message;
}
const where = (block: CodeBlock) => `${block.file}:${block.line}`;
const scriptName = (block: CodeBlock) => `${block.file.replace(/[^A-Za-z0-9]+/g, '-')}-${block.line}.mts`;
/** The JavaScript esbuild writes for a TypeScript block, beside its source. */
const compiledName = (block: CodeBlock) => scriptName(block).replace(/\.mts$/, '.mjs');
const tsBlocks = blocks.filter((b) => b.kind === 'ts' && !b.skip);

interface Context {
  server: ServerProcess;
  dataDir: string;
  scratch: string;
  env: NodeJS.ProcessEnv;
  printed: { baseUrl: string; key: string };
  port: number;
  typeCheck: Promise<string>;
  /** esbuild's errors compiling the TypeScript blocks ('' when it compiled them all). */
  compiled: Promise<string>;
}
let context: Context | undefined;

/** A partner's ES module project: strict TypeScript, the SDK's source standing in for the installed package. */
function scratchProject(): string {
  const scratch = mkdtempSync(join(tmpdir(), 'erp-doc-samples-'));
  symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'));
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'doc-samples', private: true, type: 'module' }));
  writeFileSync(
    join(scratch, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        noEmit: true,
        types: ['node'],
        // compileSamples's esbuild follows these paths too, so a sample runs against client-sdk/src, not a stale dist/.
        paths: { '@distributor-erp/sdk': [join(root, 'client-sdk', 'src', 'index.ts')] },
      },
      include: ['*.mts'],
    }),
  );
  for (const block of tsBlocks) writeFileSync(join(scratch, scriptName(block)), block.code);
  return scratch;
}

/** tsc (TypeScript 7's native compiler, as test/spec/typecheck.test.ts) over every TypeScript sample at once; its complaints with each sample's lines turned into the Markdown's. */
async function typeCheck(scratch: string): Promise<string> {
  const out = await exec(
    process.execPath,
    [join(root, 'node_modules', 'typescript-native', 'bin', 'tsc'), '-p', 'tsconfig.json'],
    { cwd: scratch, maxBuffer: 16 * 1024 * 1024 },
  ).then(
    () => '',
    (e: { stdout?: string; message: string }) => e.stdout || e.message,
  );
  return out.replace(/^(\S+\.mts)\((\d+),(\d+)\)/gm, (match, name: string, row: string, column: string) => {
    const block = tsBlocks.find((b) => scriptName(b) === name);
    return block ? `${block.file}:${block.line + Number(row)}:${column}` : match;
  });
}

/**
 * Compiles every TypeScript block to an ES module beside it (`X.mts` to `X.mjs`), as tsx compiles a file it loads:
 * esbuild, the scratch project's tsconfig.json (its paths take '@distributor-erp/sdk' to client-sdk/src, which is
 * compiled into each block's file, as tsx compiles it when a block imports it). Every other package stays an
 * import that Node resolves from node_modules, as under tsx.
 */
async function compileSamples(scratch: string): Promise<string> {
  if (tsBlocks.length === 0) return '';
  const packagesExternal: esbuild.Plugin = {
    name: 'packages-external',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) =>
        args.path === '@distributor-erp/sdk' ? undefined : { path: args.path, external: true },
      );
    },
  };
  return esbuild
    .build({
      absWorkingDir: scratch,
      entryPoints: tsBlocks.map(scriptName),
      outdir: scratch,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      tsconfig: join(scratch, 'tsconfig.json'),
      plugins: [packagesExternal],
      logLevel: 'silent',
    })
    .then(
      () => '',
      (error: { message: string }) => `esbuild could not compile the TypeScript samples: ${error.message}`,
    );
}

/** Evaluates the `export` lines `npm start` printed, as a developer pasting them would. */
async function printedVariables(output: string): Promise<{ baseUrl: string; key: string }> {
  const exports = output
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /^export ERP_(BASE_URL|API_KEY)=/.test(l));
  for (const name of ['ERP_BASE_URL', 'ERP_API_KEY']) {
    if (!exports.some((l) => l.startsWith(`export ${name}=`)))
      throw new Error(`npm start printed no "export ${name}=..." line:\n${output}`);
  }
  const { stdout } = await exec(
    'bash',
    ['-euc', `${exports.join('\n')}\nprintf '%s\\n%s\\n' "$ERP_BASE_URL" "$ERP_API_KEY"`],
    { cwd: root },
  );
  const [baseUrl, key] = stdout.split('\n');
  return { baseUrl: baseUrl!, key: key! };
}

test.before(async (t) => {
  if (parseError) return;
  t.timeout(240_000);
  const scratch = scratchProject();
  const typeChecked = typeCheck(scratch); // runs while the service starts
  const compiled = compileSamples(scratch);
  const dataDir = mkdtempSync(join(tmpdir(), 'erp-doc-start-'));
  chmodSync(dataDir, 0o755);
  const [port, pgPort] = [await freePort(), await freePort()];
  const serverEnv = { DATA_DIR: dataDir, PORT: String(port), EMBEDDED_POSTGRES_PORT: String(pgPort) };
  const server = await startServerProcess(serverEnv);
  context = {
    server,
    dataDir,
    scratch,
    port,
    typeCheck: typeChecked,
    compiled,
    printed: { baseUrl: '', key: '' },
    env: {},
  };
  // startServerProcess waits 60 s; on a machine busy with other test files the first start (initdb, migrations,
  // the synthetic distributor) can take longer, so wait on while the process lives.
  for (
    const deadline = Date.now() + 120_000;
    !server.output().includes('API listening') && server.child.exitCode === null && Date.now() < deadline;
  ) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  if (!server.output().includes('API listening')) throw new Error(`npm start did not come up:\n${server.output()}`);
  const printed = await printedVariables(server.output());
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...serverEnv,
    DATABASE_URL: '',
    ERP_BASE_URL: printed.baseUrl,
    ERP_API_KEY: printed.key,
    npm_config_update_notifier: 'false',
  };
  Object.assign(context, { printed, env });
});

test.after.always(async () => {
  if (!context) return;
  await context.server.stop();
  await context.typeCheck;
  await context.compiled;
  rmSync(context.dataDir, { recursive: true, force: true });
  rmSync(context.scratch, { recursive: true, force: true });
});

if (parseError) {
  test("the documentation's code blocks and doc-test directives are well formed", (t) => {
    t.fail(parseError);
  });
} else {
  test.serial(
    'npm start prints the two export lines the samples read, naming this service and its sandbox key',
    (t) => {
      const { printed, port, dataDir } = context!;
      t.is(printed.baseUrl, `http://127.0.0.1:${port}/api/v1`);
      t.is(printed.key, readFileSync(join(dataDir, 'sandbox-key.txt'), 'utf8').trim());
      const skipped = blocks.filter((b) => b.skip);
      const outputs = new Set(blocks.flatMap((b) => (b.expected ? [`${b.file}:${b.expected.line}`] : [])));
      const other = blocks.filter((b) => b.kind === 'other' && !outputs.has(where(b)));
      const languages = [...new Set(other.map((b) => b.lang || 'unlabelled'))].map(
        (lang) => `${lang} ${other.filter((b) => (b.lang || 'unlabelled') === lang).length}`,
      );
      t.log(
        `${blocks.length} blocks in ${documentationFiles(root).length} files: ${blocks.filter((b) => b.kind !== 'other' && !b.skip).length} run ` +
          `(${outputs.size} of them with the output the text shows), ${skipped.length} skipped, ${other.length} not code to run (${languages.join(', ')})`,
      );
      for (const block of skipped) t.log(`skipped ${where(block)} (${block.lang}): ${block.skip}`);
    },
  );

  test.serial('the TypeScript samples type-check as an ES module project (strict) against the SDK', async (t) => {
    t.timeout(120_000);
    t.is(await context!.typeCheck, '', 'tsc reported errors in the samples (file:line:column of the Markdown)');
  });

  for (const block of blocks) {
    if (block.kind === 'other') continue;
    const title = `${where(block)} (${block.lang})`;
    if (block.skip) {
      test.skip(`${title} skipped: ${block.skip}`, () => {});
      continue;
    }
    test.serial(title, async (t) => {
      t.timeout(blockTimeoutMs + 30_000);
      if (block.kind === 'shell')
        t.deepEqual(
          uncheckedCurls(block),
          [],
          `${title}: a curl that neither fails on an HTTP error (-f, --fail-with-body) nor has its output shown`,
        );
      if (block.kind === 'ts') t.is(await context!.compiled, '', `${title}: not compiled`);
      const run = await runBlock(block, context!);
      const report =
        `${title} ${run.timedOut ? `did not end within ${blockTimeoutMs / 1000} s` : run.signal ? `was killed by ${run.signal}` : `exited with ${run.exitCode}`} after ${(run.ms / 1000).toFixed(1)} s` +
        `\n--- the block ---\n${block.code}--- stdout ---\n${run.stdout}\n--- stderr ---\n${run.stderr}`;
      t.log(`${(run.ms / 1000).toFixed(1)} s`);
      t.is(run.exitCode, 0, report);
      if (run.exitCode === 0 && block.expected) {
        const difference = compareOutput(block.expected.text, run.stdout);
        t.is(
          difference,
          null,
          `${title}: its output differs from the text's (${block.file}:${block.expected.line}): ${difference}\n--- the text shows ---\n${block.expected.text}--- what ran ---\n${report}`,
        );
      }
    });
  }
}

interface Run {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  timedOut: boolean;
}

/** Runs one block in its own process group (so that a timeout ends npm and everything it started too). */
function runBlock(block: CodeBlock, { env, scratch }: Context): Promise<Run> {
  const [command, args, cwd] =
    block.kind === 'shell'
      ? ['bash', ['-euo', 'pipefail', '-c', block.code], root]
      : [process.execPath, [compiledName(block)], scratch];
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, blockTimeoutMs);
    child.on('error', reject);
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      resolve({ exitCode, signal, stdout, stderr, ms: Date.now() - started, timedOut });
    });
  });
}
