// `npm run contract -- --base-url URL --key KEY`: sends every operation's examples from the API description to a
// running deployment and checks each answer against the description: by default this repository's bundled
// generated/openapi.json (so a deployment serving a drifted description of its own still fails), or with
// --spec deployment the deployment's own GET /api/v1/openapi.json, or with --spec FILE a local document. The
// deployment's own description is fetched anyway, and a different info.version is warned about; with --spec
// deployment, the operations of this repository's description that the deployment's lacks are FAIL lines. Exit
// code 0 when every request passed, 1 when any failed, nothing was sent (a description without operations) or
// the deployment could not be reached or refused the key, 2 for a usage error (or a production key without
// --allow-live), in which case nothing was sent.
//
// This module is the command (runContractCommand, its output given to it); scripts/contract/run.ts is the binary
// that runs it on the process's own streams. The tests run it in-process and keep the binary for a few runs that
// prove it (test/support/contract.ts).
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { describeFetchError } from './exchange.js';
import { operationsOf, type Json } from './operations.js';
import { changesLines, outcomeDetails, outcomeLine, summaryLine } from './report.js';
import { checkDeployment, newRunId, type Outcome, type RunChanges } from './runner.js';

// Every path of v1 is under this prefix (product spec, Versioning 2). Not imported from server/platform/spec.ts,
// which reads generated/openapi.json on load: a missing file must get this command's own clear message.
const API_BASE_PATH = '/api/v1';

const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

/** This repository's description, made by npm install / npm run generate; found from this file, not the cwd. */
const REPOSITORY_SPEC = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'generated', 'openapi.json');
/** The --spec value that checks against the deployment's own GET /openapi.json. */
const DEPLOYMENT = 'deployment';

class Refusal extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

const HELP_AFTER = `
Which description: by default this repository's (generated/openapi.json beside this script, made by
npm install or npm run generate), so a deployment that serves a drifted description of its own still fails;
--spec deployment checks against the deployment's own (GET ${API_BASE_PATH}/openapi.json) instead, and
--spec FILE against a local bundled document (e.g. a copy you changed). The deployment's own description is
fetched in any case: when its info.version differs from the one checked against, a warning line names both
(not a failure); when it cannot be fetched, a line says so and the check goes on.

What it sends, one request after the other: one request per operation, or one per named request-body example;
the required parameters from their examples (optional ones are left out); Authorization: Bearer KEY, an
X-Request-Id (contract-<run>-<n>, printed on each line) and, on POST/PUT/PATCH, a fresh Idempotency-Key. Writes
that create or upsert records go first, then reads, then updates of a record by id, then deletes. Ids in the
examples are placeholders: each is replaced by a live record of the same kind, one that this run wrote, else
(for a read only) the first of that resource's list; two ids never share a record. A write is bound only to
records this run wrote, never to one that was there before: when the create it depends on failed, it is not
sent and fails, naming that create's line. A create (POST to a collection) gets new codes each run:
its top-level code fields and externalCodes keep their form, with their last digits replaced by the run's
number, so that a second run creates again instead of failing as a duplicate; upserts by code and replacements
are sent as they are (201 the first time, 200 afterwards).

What passes: a 2xx status the operation documents, with headers and body valid against the description.
Everything else fails, documented 4xx included (the examples are expected to succeed with a key holding their
scopes), and so do 401, 5xx, no answer, and an operation whose required parameter or body has no example.
A 429 is waited out (Retry-After) and sent again, at most twice.

What it changes: the records the examples write (upserts by code create or update the records with the
examples' codes; one new customer per run, blocked by the PATCH example; the example route's outlets and
journey plan are replaced, with this run's customers). Records it did not write are only read. Use a sandbox key. A production key (containing _live_) is refused unless
--allow-live is given: its writes would be real. A "Changed in ..." line before the last names every record
it wrote, and a "DMS:" line what it sent to the DMS connection.

DMS documents: the service keeps every document it is sent and posts it (stock, money, a trip, waits of up
to 48 hours, the day's reconciliation and its notifications); none of that can be undone. So the DMS examples
(POST /dms/{system}/documents and /files) are skipped (SKIP lines, not failures) unless --dms
DISTRIBUTOR_CODE is given, which is meant for an organisation kept for this check (an operator makes one: see
the README). With it, the examples are sent as documents of that distributor code, each transaction
document with a number made new for the run (the same in every example that names it), and every flag of the
answer is judged: a rejected document fails, except in an example that declares the flags it gets
(x-expected-flags: the rejected_* examples of malformed documents), whose flags must be exactly those.

Reads of a kind of record that the organisation does not have and that no write of this check makes (a trip,
which only the service writes; a DMS file's batch when the DMS examples are skipped) are skipped, not failed.

Output: one line per request (PASS/FAIL/SKIP, method, path, example, status, time, request id, and for a failure
the first violation or the problem answered); with --spec deployment, a FAIL line for each operation of this
repository's description missing from the deployment's; the "Changed in ..." and "DMS:" lines; then a last line
"N passed, N failed" (", N skipped" when any was). A description without operations sends nothing, and that
fails (exit code 1).`;

function buildProgram(): Command {
  return new Command('contract')
    .description("Check a running deployment against the API description, using the description's own examples.")
    .usage('--base-url URL --key KEY [options]   (npm run contract -- ...)')
    .requiredOption(
      '--base-url <url>',
      `the deployment, e.g. http://127.0.0.1:3000 (${API_BASE_PATH} is added unless the URL ends with it)`,
    )
    .addOption(
      new Option('--key <key>', 'the API key to send; the variable keeps it out of shell history')
        .env('CONTRACT_API_KEY')
        .makeOptionMandatory(),
    )
    .option(
      '--spec <deployment|file>',
      '"deployment": check against the deployment\'s own GET /openapi.json; a file: against that bundled OpenAPI JSON document (default: this repository\'s generated/openapi.json)',
    )
    .option('--allow-live', "allow a production key (containing _live_): the examples' writes will be real")
    .option(
      '--dms <distributorCode>',
      "also send the DMS examples (kept for good and posted), as documents of this distributor code (the organisation's DMS connection's): only into an organisation kept for this check",
    )
    .option('--timeout <ms>', 'milliseconds to wait for each answer', '30000')
    .option('--verbose', 'print what was sent and every violation under each line')
    .addHelpText('after', HELP_AFTER)
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .allowExcessArguments(false);
}

interface Options {
  baseUrl: string;
  key: string;
  spec?: string;
  allowLive?: boolean;
  timeout: string;
  verbose?: boolean;
  dms?: string;
}

/** Where the command writes: the process's streams in the binary, a buffer in a test. */
export interface CommandOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Runs `npm run contract` with `argv` (as process.argv: node, script, arguments...) and resolves to its exit code. */
export async function runContractCommand(argv: string[], output: CommandOutput): Promise<number> {
  try {
    return await main(argv, output);
  } catch (error) {
    output.stderr(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return error instanceof Refusal ? error.exitCode : EXIT_FAILED;
  }
}

async function main(argv: string[], output: CommandOutput): Promise<number> {
  const program = buildProgram().configureOutput({ writeOut: output.stdout, writeErr: output.stderr });
  try {
    program.parse(argv);
  } catch (error) {
    if (error instanceof CommanderError)
      return ['commander.helpDisplayed', 'commander.version'].includes(error.code) ? 0 : EXIT_USAGE;
    throw error;
  }
  const options = program.opts<Options>();
  const timeoutMs = Number(options.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
    throw new Refusal('--timeout takes a positive number of milliseconds', EXIT_USAGE);
  if (options.dms !== undefined && !/^[A-Za-z0-9_-]{1,32}$/.test(options.dms))
    throw new Refusal(
      `--dms takes the distributor code of the organisation's DMS connection (letters, digits, _ and -, at most 32), not ${JSON.stringify(options.dms)}`,
      EXIT_USAGE,
    );
  if (options.key.includes('_live_') && !options.allowLive) {
    throw new Refusal(
      'this is a production key (it contains _live_): the examples would write real records. Use a sandbox key, or add --allow-live if you mean it. Nothing was sent.',
      EXIT_USAGE,
    );
  }
  const apiRoot = apiRootOf(options.baseUrl);
  // A local document is read before anything is sent (a bad one is a usage error); the deployment's own is
  // needed first with --spec deployment, and otherwise only fetched, after the key is known good, to compare.
  const local =
    options.spec === DEPLOYMENT
      ? undefined
      : options.spec
        ? { document: readSpec(options.spec, `--spec ${options.spec}`), source: options.spec }
        : {
            document: readSpec(REPOSITORY_SPEC, `this repository's description ${REPOSITORY_SPEC}`),
            source: `this repository's description, ${shown(REPOSITORY_SPEC)}`,
          };
  const own = local ? undefined : await fetchDescription(apiRoot, timeoutMs);
  const key = await introspectKey(apiRoot, options.key, timeoutMs);
  if (key.environment === 'live' && !options.allowLive) {
    throw new Refusal(
      `the deployment says ${key.prefix} is a production key: the examples would write real records. Add --allow-live if you mean it. Nothing was written.`,
      EXIT_USAGE,
    );
  }
  const { document, source } = (local ?? own)!;
  const versionLine = local ? await compareWithDeployment(apiRoot, timeoutMs, local.document) : undefined;

  const info = (document.info ?? {}) as Json;
  const runId = newRunId();
  output.stdout(`Checking ${apiRoot} against ${source} (${String(info.title)} ${String(info.version)})\n`);
  if (versionLine) output.stdout(versionLine + '\n');
  // With --spec deployment, the operations this repository describes and the deployment does not are failures.
  const missing = local ? [] : missingFromDeployment(document);
  if (!Array.isArray(missing)) output.stdout(missing.note + '\n');
  output.stdout(`Key ${key.prefix} (${key.environment}) of ${key.organization}; run ${runId}\n`);
  const outcomes: Outcome[] = [];
  const changes: RunChanges = { written: [], dmsSkipped: 0 };
  for await (const outcome of checkDeployment({
    document,
    apiRoot,
    key: options.key,
    timeoutMs,
    runId,
    dmsDistributorCode: options.dms,
    changes,
  })) {
    outcomes.push(outcome);
    output.stdout(outcomeLine(outcome) + '\n');
    if (options.verbose) for (const line of outcomeDetails(outcome)) output.stdout(line + '\n');
  }
  const planned = outcomes.length;
  for (const outcome of Array.isArray(missing) ? missing : []) {
    outcomes.push(outcome);
    output.stdout(outcomeLine(outcome) + '\n');
  }
  for (const line of changesLines(changes, key.organization)) output.stdout(line + '\n');
  output.stdout(summaryLine(outcomes) + '\n');
  if (outcomes.every((o) => o.notSent)) {
    output.stderr(
      `error: nothing was sent: ${
        planned === 0
          ? `${source} describes no operations (its paths are empty), so nothing of the deployment was checked`
          : `none of the ${planned} requests of ${source} could be sent (see the FAIL and SKIP lines)`
      }\n`,
    );
    return EXIT_FAILED;
  }
  return outcomes.every((o) => o.passed) ? 0 : EXIT_FAILED;
}

/**
 * With --spec deployment: a failed outcome (not sent) for each operation of this repository's description that
 * the deployment's own lacks (same method, same path whatever its parameters are called); or a note when this
 * repository's description cannot be read.
 */
function missingFromDeployment(deployment: Json): Outcome[] | { note: string } {
  let repository: Json;
  try {
    repository = readSpec(REPOSITORY_SPEC, `this repository's description ${REPOSITORY_SPEC}`);
  } catch (error) {
    return {
      note: `Note: operations missing from the deployment's description are not listed: ${(error as Error).message}`,
    };
  }
  const key = (method: string, template: string) => `${method} ${template.replace(/\{[^}]*\}/g, '{}')}`;
  const described = new Set(operationsOf(deployment).map((o) => key(o.method, o.template)));
  return operationsOf(repository)
    .filter((o) => !described.has(key(o.method, o.template)))
    .map(({ method, template }) => ({
      request: {
        method,
        template,
        pathParameters: {},
        query: {},
        headers: {},
        phase: 'read' as const,
        produces: [],
        needs: [],
      },
      passed: false,
      notSent: true,
      requestId: '',
      reason: `missing from the deployment's description (this repository's ${shown(REPOSITORY_SPEC)} has it)`,
      violations: [],
      notes: [],
    }));
}

function apiRootOf(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new Refusal(`--base-url ${baseUrl} is not a URL (e.g. http://127.0.0.1:3000)`, EXIT_USAGE);
  }
  if (!['http:', 'https:'].includes(url.protocol))
    throw new Refusal(`--base-url must be http or https, not ${url.protocol}`, EXIT_USAGE);
  const root = `${url.origin}${url.pathname}`.replace(/\/+$/, '');
  return root.endsWith(API_BASE_PATH) ? root : root + API_BASE_PATH;
}

/** `label` names the document in messages: `--spec FILE`, or this repository's description. */
function readSpec(file: string, label: string): Json {
  const remedy =
    file === REPOSITORY_SPEC
      ? 'npm install or npm run generate makes it; or choose --spec deployment or --spec FILE'
      : `use a bundled JSON document such as generated/openapi.json, or --spec ${DEPLOYMENT} for the deployment's own`;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Refusal(`cannot read ${label}: ${(error as Error).message} (${remedy})`, EXIT_USAGE);
  }
  try {
    const document = JSON.parse(text) as Json;
    if (typeof document.paths !== 'object') throw new Error('no paths');
    return document;
  } catch {
    throw new Refusal(`${label} is not a bundled OpenAPI JSON document (${remedy})`, EXIT_USAGE);
  }
}

/** A path as the user would type it: relative to the cwd when it lies below it. */
function shown(file: string): string {
  const path = relative(process.cwd(), file);
  return path && !path.startsWith('..') && !isAbsolute(path) ? path : file;
}

/** The deployment's own GET /openapi.json, or why it could not be had. */
async function fetchOwnDescription(
  apiRoot: string,
  timeoutMs: number,
): Promise<{ document: Json; url: string } | { problem: string; unreachable: boolean }> {
  const url = `${apiRoot}/openapi.json`;
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    text = await response.text();
  } catch (error) {
    return {
      problem: `cannot reach the deployment at ${url}: ${describeFetchError(error, timeoutMs)}`,
      unreachable: true,
    };
  }
  let document: Json | undefined;
  try {
    document = JSON.parse(text) as Json;
  } catch {
    /* reported below */
  }
  if (response.status !== 200 || typeof document?.paths !== 'object') {
    return { problem: `${url} answered ${response.status} without an OpenAPI document`, unreachable: false };
  }
  return { document, url };
}

/** With --spec deployment: the description to check against, which must be had. */
async function fetchDescription(apiRoot: string, timeoutMs: number): Promise<{ document: Json; source: string }> {
  const own = await fetchOwnDescription(apiRoot, timeoutMs);
  if ('problem' in own) {
    throw new Refusal(
      own.unreachable
        ? `${own.problem}. Nothing was checked.`
        : `${own.problem}; is ${apiRoot} the API? (leave out --spec to check against this repository's description)`,
      EXIT_FAILED,
    );
  }
  return { document: own.document, source: `its own description, ${own.url}` };
}

/**
 * Otherwise the deployment's own description is fetched only to compare its info.version with the one checked
 * against: a line to print when they differ or it could not be fetched, never a failure.
 */
async function compareWithDeployment(apiRoot: string, timeoutMs: number, checked: Json): Promise<string | undefined> {
  const own = await fetchOwnDescription(apiRoot, timeoutMs);
  if ('problem' in own)
    return `Note: could not fetch the deployment's own description, so its version is not compared (${own.problem})`;
  const version = (document: Json) => String(((document.info ?? {}) as Json).version);
  if (version(own.document) === version(checked)) return undefined;
  return `Warning: the deployment describes itself as version ${version(own.document)} (${own.url}), but this check uses version ${version(checked)}: answers are judged by ${version(checked)} (--spec ${DEPLOYMENT} judges them by the deployment's own)`;
}

interface KeyFacts {
  prefix: string;
  environment: string;
  organization: string;
}

/** GET /me: proves the deployment takes the key before anything is written. */
async function introspectKey(apiRoot: string, key: string, timeoutMs: number): Promise<KeyFacts> {
  const response = await reach(`${apiRoot}/me`, { Authorization: `Bearer ${key}` }, timeoutMs);
  const body = (await response.json().catch(() => undefined)) as Json | undefined;
  if (response.status !== 200) {
    const told = body?.code
      ? `${response.status} ${String(body.code)}: ${String(body.detail ?? '')}`
      : `${response.status}`;
    throw new Refusal(
      `the deployment refused the key (GET ${apiRoot}/me answered ${told}). Nothing was checked.`,
      EXIT_FAILED,
    );
  }
  const organization = (body?.organization ?? {}) as Json;
  return {
    prefix: String(body?.prefix),
    environment: String(body?.environment),
    organization: String(organization.name ?? organization.id),
  };
}

async function reach(url: string, headers: Record<string, string>, timeoutMs: number): Promise<Response> {
  try {
    return await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    throw new Refusal(
      `cannot reach the deployment at ${url}: ${describeFetchError(error, timeoutMs)}. Nothing was checked.`,
      EXIT_FAILED,
    );
  }
}
