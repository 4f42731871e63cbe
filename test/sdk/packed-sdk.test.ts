// The SDK as a partner gets it: `npm pack`, installed offline into empty projects, one of each module system:
// - an ES module project: a sample program type-checked against the installed declarations, compiled, and run
//   against the sandbox service with a real webhook; and the quick start of client-sdk/README.md, exactly as written;
// - a CommonJS project: a program whose import tsc turns into require(), typed by the CommonJS declarations
//   (checked under "module": "node16" and the older "commonjs"), run against the same service;
// - the named types: a file of the ES module project names every schema of the API description and every event kind
//   as the package exports it (compiled in the same tsc run), and the README's examples (an invoice, a payment, a DMS
//   day and its flags) run on the installed package;
// - publishing: `npm publish --dry-run` of the built package, offline (npm 11's dry run otherwise asks the registry
//   for the package's versions; --offline makes it ask nothing, and a dead registry address makes sure of that).
// One pack, one tsc run per project and one service for the file, tests in turn: this is the only test file that
// writes client-sdk/dist. The service is the sandbox as `npm start` makes it (its synthetic distributor and key),
// started in this process on a clone of the run's template (test/support/service.ts): a fresh `npm start` of its own
// (initdb, migrations, a child process) cost this file about 8 CPU-s, and test/service/npm-start.test.ts and
// test/docs/samples.test.ts prove that command.
// CPU (issue 35; this was the heaviest file of the suite): the partner projects are type-checked and compiled by
// TypeScript 7's native compiler (typescript-native, as `npm run typecheck`), about a quarter of TypeScript 5.9's
// CPU for the same diagnostics and, for these projects, byte for byte the same JavaScript. Two steps stay on 5.9,
// because TypeScript 7 removed "moduleResolution": "node10": the SDK's own build (client-sdk/tsconfig.cjs.json
// compiles under Node10; the published package stays built as it always was) and the check under the older
// "module": "commonjs", whose point is a partner still on that setting. The build runs as its npm script runs it
// (node scripts/build.mjs, without npm in front), one `npm pack` packs the three tarballs, and the operator CLI
// runs from the run's compiled bundle (test/support/entry.ts), as `npm run admin` runs dist/.
import test from 'ava';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  generateSchemaTypes,
  isGlobalName,
  NAMES_THE_SDK_OWNS,
} from '../../client-sdk/scripts/generate-schema-types.mjs';
import { WEBHOOK_EVENT_TYPES } from '../../client-sdk/src/index.js';
import { freePort } from '../../scripts/lib/free-port.js';
import { webhookEventTypes } from '../../server/composition/modules.js';
import { TEST_EVENT } from '../../server/platform/webhooks/endpoints.js';
import { apiDocument, apiVersion } from '../../server/platform/spec.js';
import { codeBlocks, compareOutput, type CodeBlock } from '../docs/code-blocks.js';
import { entryArguments } from '../support/entry.js';
import { TEST_SECRETS } from '../support/secrets.js';
import { startTestService, type TestService } from '../support/service.js';

const root = process.cwd();
const exec = promisify(execFile);
const npm = (args: string[], cwd: string) =>
  exec('npm', args, { cwd, env: { ...process.env, npm_config_update_notifier: 'false' }, maxBuffer: 16 * 1024 * 1024 });
const tsc = join(root, 'node_modules', 'typescript-native', 'bin', 'tsc');
/** TypeScript 5.9's tsc: TypeScript 7 no longer has "moduleResolution": "node10". */
const tsc5 = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
// TypeScript 7 single-threaded (test/spec/typecheck.test.ts says why); 5.9 has no such switch and no threads.
/** tsc's complaints ('' when it compiled cleanly). */
const compile = (cwd: string, args: string[] = [], compiler = tsc) =>
  exec(
    process.execPath,
    [compiler, '-p', 'tsconfig.json', ...(compiler === tsc ? ['--singleThreaded'] : []), ...args],
    {
      cwd,
    },
  ).then(
    () => '',
    (e: { stdout: string }) => e.stdout,
  );

const sdkVersion = (JSON.parse(readFileSync(join(root, 'client-sdk', 'package.json'), 'utf8')) as { version: string })
  .version;

/** Packs the SDK and its runtime dependencies (taken from node_modules, so nothing is downloaded). */
async function packSdk(into: string): Promise<string[]> {
  // `npm run build -w client-sdk` runs this script; npm in front of it adds only CPU.
  await exec(process.execPath, [join(root, 'client-sdk', 'scripts', 'build.mjs')], { cwd: join(root, 'client-sdk') });
  await npm(
    [
      'pack',
      '--ignore-scripts',
      '--pack-destination',
      into,
      join(root, 'client-sdk'),
      join(root, 'node_modules', 'openapi-fetch'),
      join(root, 'node_modules', 'openapi-typescript-helpers'),
    ],
    into,
  );
  return readdirSync(into)
    .filter((name) => name.endsWith('.tgz'))
    .map((name) => join(into, name));
}

/** An empty project of the given module system with the tarballs installed offline (a dead registry address makes any download fail). */
async function sampleProject(
  tarballs: string[],
  type: 'module' | 'commonjs',
  compilerOptions: Record<string, unknown>,
): Promise<string> {
  const app = mkdtempSync(join(tmpdir(), `erp-sdk-${type}-`));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: `sdk-sample-${type}`, private: true, type }));
  await npm(['install', '--offline', '--registry', 'http://127.0.0.1:9', '--no-audit', '--no-fund', ...tarballs], app);
  mkdirSync(join(app, 'src'));
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        strict: true,
        outDir: 'dist',
        rootDir: 'src',
        skipLibCheck: false,
        types: ['node'],
        typeRoots: [join(root, 'node_modules', '@types')],
        ...compilerOptions,
      },
      include: ['src'],
    }),
  );
  return app;
}

const schemaNames = Object.keys(
  (apiDocument as unknown as { components: { schemas: Record<string, unknown> } }).components.schemas,
);
/** `invoice.created` -> `InvoiceCreatedEvent`. */
const eventTypeName = (type: string) =>
  `${type
    .split(/[._]/)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('')}Event`;

/**
 * A file that names, as the package exports them, every schema of the API description (each the same type as
 * its schema) and every event kind (`InvoiceCreatedEvent` for `invoice.created`, the envelope of that kind). A
 * name missing from the package, or a different type under it, fails the project's compilation.
 */
function namedTypesCheck(): string {
  const exported = schemaNames.filter((name) => !(name in NAMES_THE_SDK_OWNS) && !isGlobalName(name));
  const lines = [
    `import type { components, Page, WebhookEnvelope } from '@distributor-erp/sdk';`,
    `import type { ${exported.join(', ')} } from '@distributor-erp/sdk';`,
    `import type { ${WEBHOOK_EVENT_TYPES.map(eventTypeName).join(', ')} } from '@distributor-erp/sdk';`,
    `type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;`,
    `type Schemas = components['schemas'];`,
    ...exported.map((name) => `export const schema${name}: Same<${name}, Schemas['${name}']> = true;`),
    ...WEBHOOK_EVENT_TYPES.map(
      (type) =>
        `export const event${eventTypeName(type)}: Same<${eventTypeName(type)}, WebhookEnvelope<'${type}'>> = true;`,
    ),
    // The names left to the SDK: its Page is the page typed by its records; Date stays JavaScript's.
    `export const page: Same<Page<Schemas['Invoice']>['data'], Schemas['Invoice'][]> = true;`,
    `// @ts-expect-error the schema Date is not exported under a name that would hide the global`,
    `import type { Date as DateSchema } from '@distributor-erp/sdk';`,
  ];
  return lines.join('\n') + '\n';
}

/** The run blocks (```ts, not skipped) of client-sdk/README.md under "## Examples..." and "## Types", with the output the text shows. */
function readmeExamples(): CodeBlock[] {
  const readme = readFileSync(join(root, 'client-sdk', 'README.md'), 'utf8');
  const headings = readme
    .split('\n')
    .flatMap((line, index) => (/^## /.test(line) ? [{ line: index + 1, title: line }] : []));
  const sectionOf = (line: number) => headings.filter((heading) => heading.line < line).at(-1)?.title ?? '';
  return codeBlocks('client-sdk/README.md', readme).filter(
    (block) => block.kind === 'ts' && !block.skip && /^## (Examples|Types)\b/.test(sectionOf(block.line)),
  );
}

/** The first ```ts block after the README's "## Quick start" heading. */
function readmeQuickStart(): string {
  const readme = readFileSync(join(root, 'client-sdk', 'README.md'), 'utf8');
  const section = readme.split(/^## Quick start$/m)[1]?.split(/^## /m)[0] ?? '';
  const block = /^```ts\n([\s\S]*?)^```$/m.exec(section);
  if (!block) throw new Error('client-sdk/README.md has no ```ts block under "## Quick start"');
  return block[1]!;
}

interface PublishDryRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}
interface Context {
  esm: string;
  cjs: string;
  packs: string;
  dataDir: string;
  server: TestService;
  baseUrl: string;
  key: string;
  /** The ES module project's one tsc run (its complaints, '' when clean): the quick start, the sample, the examples and the named types. */
  esmCompiled: Promise<string>;
  examples: { block: CodeBlock; file: string }[];
  schemaTypesCurrent: boolean;
  publishDryRun: Promise<PublishDryRun>;
}
let context: Context;

test.before(async (t) => {
  t.timeout(360_000); // a build (tsc twice), two offline installs and the sandbox service: minutes on a busy machine
  // Before the build below writes it again: is the committed src/schema-types.ts what the generated types give?
  const schemaTypesCurrent = generateSchemaTypes({ check: true });
  const packs = mkdtempSync(join(tmpdir(), 'erp-sdk-packs-'));
  const tarballs = await packSdk(packs);
  if (tarballs.length !== 3) throw new Error(`expected 3 tarballs, got ${tarballs.join(', ')}`);
  // On the package just built (dist/ is there; --ignore-scripts: no second build), while the projects install.
  const publishDryRun = exec(
    'npm',
    [
      'publish',
      '--dry-run',
      '--json',
      '--ignore-scripts',
      '--offline',
      '--registry',
      'http://127.0.0.1:9',
      '--loglevel',
      'http',
    ],
    {
      cwd: join(root, 'client-sdk'),
      env: { ...process.env, npm_config_update_notifier: 'false' },
      maxBuffer: 16 * 1024 * 1024,
    },
  ).then(
    ({ stdout, stderr }) => ({ exitCode: 0, stdout, stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({
      exitCode: e.code ?? 1,
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? '',
    }),
  );
  const esm = await sampleProject(tarballs, 'module', { module: 'NodeNext', moduleResolution: 'NodeNext' });
  copyFileSync(join(root, 'test', 'fixtures', 'sdk-sample', 'sample.ts'), join(esm, 'src', 'sample.ts'));
  writeFileSync(join(esm, 'src', 'quick-start.ts'), readmeQuickStart());
  writeFileSync(join(esm, 'src', 'named-types.ts'), namedTypesCheck());
  const examples = readmeExamples().map((block) => ({ block, file: `example-${block.line}` }));
  for (const { block, file } of examples) writeFileSync(join(esm, 'src', `${file}.ts`), block.code);
  const esmCompiled = compile(esm); // runs while the CommonJS project installs and the service starts
  const cjs = await sampleProject(tarballs, 'commonjs', { module: 'Node16', moduleResolution: 'Node16' });
  copyFileSync(join(root, 'test', 'fixtures', 'sdk-sample', 'cjs', 'sample.ts'), join(cjs, 'src', 'sample.ts'));

  const dataDir = mkdtempSync(join(tmpdir(), 'erp-sdk-start-'));
  const server = await startTestService('packed_sdk', {
    env: { SANDBOX_BOOTSTRAP: 'true', DATA_DIR: dataDir, WEBHOOK_ALLOW_LOOPBACK: 'true' },
  });
  const key = server.service.sandboxKey;
  if (!key) {
    await server.stop();
    throw new Error('the service made no sandbox key');
  }
  context = {
    esm,
    cjs,
    packs,
    dataDir,
    server,
    baseUrl: `${server.baseUrl}/api/v1`,
    key,
    esmCompiled,
    examples,
    schemaTypesCurrent,
    publishDryRun,
  };
});

test.after.always(async () => {
  if (!context) return;
  await context.server.stop();
  await context.esmCompiled;
  await context.publishDryRun;
  for (const dir of [context.dataDir, context.esm, context.cjs, context.packs])
    rmSync(dir, { recursive: true, force: true });
});

test.serial(
  'the package declares an ES module and a CommonJS entry, each with its own declarations, and the tested Node versions',
  (t) => {
    const installed = JSON.parse(
      readFileSync(join(context.cjs, 'node_modules', '@distributor-erp', 'sdk', 'package.json'), 'utf8'),
    ) as Record<string, any>;
    t.is(installed.version, sdkVersion);
    t.deepEqual(installed.exports['.'], {
      import: { types: './dist/esm/index.d.ts', default: './dist/esm/index.js' },
      require: { types: './dist/cjs/index.d.ts', default: './dist/cjs/index.js' },
    });
    t.deepEqual(installed.engines, { node: '>=20' });
    // Without this marker Node would read dist/cjs/*.js as ES modules (the package itself is "type": "module").
    t.deepEqual(
      JSON.parse(
        readFileSync(
          join(context.cjs, 'node_modules', '@distributor-erp', 'sdk', 'dist', 'cjs', 'package.json'),
          'utf8',
        ),
      ),
      { type: 'commonjs' },
    );
  },
);

test.serial(
  'a CommonJS project requires the packed SDK, type-checks against its CommonJS declarations and talks to the service',
  async (t) => {
    t.timeout(180_000);
    const { cjs } = context;
    t.is(await compile(cjs), '', 'the sample type-checks and compiles under "module": "node16" in a CommonJS project');
    t.is(
      // TypeScript's own lib files are not checked again (--skipDefaultLibCheck: 8.4 -> 5.9 CPU-s); @types/node and the
      // SDK's declarations still are, under node10 resolution, which is this check's point.
      await compile(
        cjs,
        ['--noEmit', '--module', 'commonjs', '--moduleResolution', 'node10', '--skipDefaultLibCheck'],
        tsc5,
      ),
      '',
      'and under the older "module": "commonjs" (TypeScript 5.9)',
    );
    const emitted = readFileSync(join(cjs, 'dist', 'sample.js'), 'utf8');
    t.regex(emitted, /require\("@distributor-erp\/sdk"\)/, 'tsc turned the import into require()');
    t.notRegex(emitted, /\bimport\(/, 'no dynamic import() stands in for it');

    const run = await exec(process.execPath, ['dist/sample.js'], {
      cwd: cjs,
      env: { ...process.env, ERP_BASE_URL: context.baseUrl, ERP_API_KEY: context.key },
    }).catch((e: { stdout: string; stderr: string }) => e);
    let seen: Record<string, any>;
    try {
      seen = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, any>;
    } catch {
      t.fail(`the CommonJS sample printed no result.\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
      return;
    }
    t.is(seen.loadedFrom, join(cjs, 'node_modules', '@distributor-erp', 'sdk', 'dist', 'cjs', 'index.js'));
    t.true(seen.commonjs);
    t.deepEqual(seen.health, { status: 'ok', version: apiVersion });
    t.is(seen.customers, 2);
    t.deepEqual(seen.notFound, { status: 404, code: 'not_found', type: '/api/v1/errors/not_found' });
    t.regex(seen.missingBaseUrl, /^TypeError: createErpClient needs baseUrl/);
  },
);

test.serial(
  'the quick start of client-sdk/README.md runs as written in an ES module project against a local service',
  async (t) => {
    t.timeout(180_000);
    const { esm } = context;
    t.is(
      await context.esmCompiled,
      '',
      "the quick start, the sample, the README's examples and the named types type-check against the ES module declarations",
    );
    t.regex(
      readFileSync(join(esm, 'dist', 'quick-start.js'), 'utf8'),
      /^import \{[^}]*\} from '@distributor-erp\/sdk';$/m,
    );
    const run = await exec(process.execPath, ['dist/quick-start.js'], {
      cwd: esm,
      env: { ...process.env, ERP_BASE_URL: context.baseUrl, ERP_API_KEY: context.key },
    }).catch((e: { stdout: string; stderr: string }) => e);
    const lines = run.stdout.trim().split('\n');
    t.is(lines.length, 3, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
    t.is(lines[0], `health ok ${apiVersion}`);
    t.regex(lines[1]!, /^customers \S+ \S+ \S+$/);
    // The error example names a code of the catalogue, and the field with its own reason.
    t.regex(lines[2]!, /^refused 422 business_rule \/outletCode duplicate_code \S+$/);
    const catalogue = await fetch(`${context.baseUrl}/errors/business_rule`);
    t.is(catalogue.status, 200, 'GET /errors/business_rule describes the code the example handles');
  },
);

test.serial(
  'a sample program on the packed SDK type-checks, creates once under one key, walks every page, handles each feed change once and verifies a real webhook',
  async (t) => {
    t.timeout(240_000);
    const { esm: app, server, baseUrl, key } = context;
    // Type-checked and compiled against the installed declarations only (the project's one tsc run).
    t.is(await context.esmCompiled, '', 'the sample type-checks against the packed SDK');
    const webhookPort = await freePort();
    const me = (await fetch(`${baseUrl}/me`, { headers: { Authorization: `Bearer ${key}` } }).then((r) =>
      r.json(),
    )) as { organization: { id: string } };
    const { stdout: added } = await exec(
      process.execPath,
      [
        ...entryArguments('scripts/admin/cli.ts'),
        'webhook',
        'add',
        '--org',
        me.organization.id,
        '--url',
        `http://127.0.0.1:${webhookPort}/webhooks`,
        '--events',
        'customer.created',
        '--json',
      ],
      // The installation's secrets, as the service's own: the endpoint's signing secret is sealed by the CLI and opened by the service.
      { env: { ...process.env, ...TEST_SECRETS, DATABASE_URL: server.database.url, WEBHOOK_ALLOW_LOOPBACK: 'true' } },
    );
    const endpoint = JSON.parse(added) as { secret: string };

    const run = await exec(process.execPath, ['dist/sample.js'], {
      cwd: app,
      env: {
        ...process.env,
        ERP_BASE_URL: baseUrl,
        ERP_API_KEY: key,
        WEBHOOK_PORT: String(webhookPort),
        WEBHOOK_SECRET: endpoint.secret,
      },
    }).catch((e: { stdout: string; stderr: string }) => ({ stdout: e.stdout, stderr: e.stderr }));
    let seen: Record<string, any>;
    try {
      seen = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, any>;
    } catch {
      t.fail(
        `the sample printed no result.\nstdout: ${run.stdout}\nstderr: ${(run as { stderr?: string }).stderr ?? ''}`,
      );
      return;
    }
    t.log(JSON.stringify(seen).slice(0, 400));

    t.is(seen.secondId, seen.createdId, 'the same key gives the same record');
    t.is(seen.replayed, 'true');
    t.is(seen.withOurCode, 1, 'one record with the code, found by walking every page');
    t.is(seen.walked, 301, 'the 300 sandbox outlets and ours');
    t.is(seen.distinctWalked, 301, 'no customer twice');
    t.is(seen.handledFirst, 301);
    t.is(seen.handledFirstDistinct, 301);
    t.deepEqual(
      [...seen.handledSecond].sort(),
      [...seen.expectedSecond].sort(),
      'the second poll hands over the two changes, once each',
    );
    t.like(seen.error, { status: 400, code: 'invalid_field', field: '/outletCode' });
    t.regex(seen.error.requestId, /\S+/);
    t.like(seen.webhook, { type: 'customer.created', objectId: seen.createdId, apiVersion: 'v1' });
    t.regex(seen.webhook.id, /^evt_/);
    t.is(seen.replayStatus, 204, 'a redelivery is answered 2xx...');
    t.true(seen.duplicateDeliveries >= 1, '...and skipped by the gate as an event id already processed');
    t.is(seen.tamperedStatus, 400, 'a changed body fails verification');
    t.is(seen.rejectedDeliveries, 1, 'only the tampered copy was refused');
  },
);

test.serial(
  'every schema of the API description and every event kind the service sends has its name in the package, the same type',
  async (t) => {
    t.true(
      context.schemaTypesCurrent,
      'client-sdk/src/schema-types.ts is behind the generated types: run `npm run generate:types -w client-sdk`',
    );
    for (const name of ['Invoice', 'InvoiceCreate', 'Payment', 'PaymentCreate', 'CreditNote', 'DmsFlag', 'DmsDocument'])
      t.true(schemaNames.includes(name), name);
    // Only these two schemas have no export of their own name; a new schema named like a global shows up here.
    t.deepEqual(schemaNames.filter((name) => name in NAMES_THE_SDK_OWNS || isGlobalName(name)).sort(), [
      'Date',
      'Page',
    ]);
    t.deepEqual(
      [...WEBHOOK_EVENT_TYPES].sort(),
      [...webhookEventTypes, TEST_EVENT].sort(),
      'the SDK knows exactly the event kinds the service sends',
    );
    const check = readFileSync(join(context.esm, 'src', 'named-types.ts'), 'utf8');
    t.is(check.match(/^export const schema/gm)?.length, schemaNames.length - 2);
    t.is(check.match(/^export const event/gm)?.length, WEBHOOK_EVENT_TYPES.length);
    t.is(
      await context.esmCompiled,
      '',
      "the package exports each name, as the same type as its schema or its event kind's envelope",
    );
  },
);

test.serial(
  'the examples of client-sdk/README.md (an invoice, a payment with allocations, a DMS day and its flags, the named types) run on the installed package',
  async (t) => {
    t.timeout(180_000);
    const { esm, examples, baseUrl, key } = context;
    t.true(examples.length >= 3, `examples found: ${examples.map(({ block }) => block.line).join(', ')}`);
    t.is(await context.esmCompiled, '');
    for (const { block, file } of examples) {
      const run = await exec(process.execPath, [join('dist', `${file}.js`)], {
        cwd: esm,
        env: { ...process.env, ERP_BASE_URL: baseUrl, ERP_API_KEY: key },
        timeout: 90_000,
      }).then(
        ({ stdout, stderr }) => ({ ok: true, stdout, stderr }),
        (e: { stdout?: string; stderr?: string; message: string }) => ({
          ok: false,
          stdout: e.stdout ?? '',
          stderr: e.stderr || e.message,
        }),
      );
      const where = `client-sdk/README.md:${block.line}`;
      t.true(run.ok, `${where} failed\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
      t.truthy(block.expected, `${where} shows its output`);
      if (run.ok && block.expected)
        t.is(compareOutput(block.expected.text, run.stdout), null, `${where} printed:\n${run.stdout}`);
    }
  },
);

test.serial('npm publish --dry-run publishes the built package publicly, with its metadata, offline', async (t) => {
  const manifest = JSON.parse(readFileSync(join(root, 'client-sdk', 'package.json'), 'utf8')) as Record<string, any>;
  t.deepEqual(
    manifest.publishConfig,
    { access: 'public' },
    'a scoped package is private on the registry unless access is public',
  );
  t.is(manifest.license, 'MIT');
  t.regex(readFileSync(join(root, 'client-sdk', 'LICENSE'), 'utf8'), /^MIT License\n/);
  // Provenance: the registry checks that the package was built in the repository repository.url names.
  t.like(manifest.repository, { type: 'git', directory: 'client-sdk' });
  t.regex(manifest.repository.url, /^git\+https:\/\/github\.com\/[\w.-]+\/[\w.-]+\.git$/);
  t.is(manifest.types, 'dist/cjs/index.d.ts');
  t.deepEqual(manifest.files, ['dist', 'README.md', 'LICENSE']);
  t.false('private' in manifest);

  const run = await context.publishDryRun;
  t.is(run.exitCode, 0, run.stderr);
  t.notRegex(run.stderr, /\bhttp fetch\b/, 'the dry run made no request (npm logs every request at --loglevel http)');
  t.regex(run.stderr, /Publishing to http:\/\/127\.0\.0\.1:9\/ with tag latest and public access \(dry-run\)/);
  const published = (
    JSON.parse(run.stdout) as Record<string, { name: string; version: string; files: { path: string }[] }>
  )[manifest.name]!;
  t.like(published, { name: '@distributor-erp/sdk', version: sdkVersion });
  const files = published.files.map((file) => file.path);
  for (const file of [
    'package.json',
    'README.md',
    'LICENSE',
    'dist/esm/index.js',
    'dist/esm/index.d.ts',
    'dist/esm/schema-types.d.ts',
    'dist/cjs/index.js',
    'dist/cjs/index.d.ts',
    'dist/cjs/package.json',
  ]) {
    t.true(files.includes(file), `${file} is published`);
  }
  t.deepEqual(
    files.filter((file) => !/^(dist\/(esm|cjs)\/|package\.json$|README\.md$|LICENSE$)/.test(file)),
    [],
    'nothing but the build, the README and the licence (no src/, no scripts/)',
  );
});
