// Property-based pass over every operation of the bundled description (issue 11). For each operation, fast-check
// generates requests (valid-leaning ones from the schemas, the examples and live records, then mutations: wrong
// types, missing and extra fields, bad encodings, invalid UTF-8, lone surrogates, empty and oversized bodies,
// junk parameters, other organisations' ids, wrong keys and methods) and sends them over real HTTP. Every answer
// must be below 500, documented for its operation and valid against the description (the same checker as every
// other test); a request the description says must be refused must get a 4xx; a 2xx never shows another
// organisation's id the request did not carry; a refused write changes none of the organisation's data.
//
// Seeded and bounded: FUZZ_SEED (default below) and FUZZ_RUNS (the total number of requests, split over the
// operations, writes counting double). A failure prints the request as bytes and as a curl command, and the line
// that replays it: FUZZ_OP='<operation>' FUZZ_SEED=<seed> FUZZ_PATH=<path>. FUZZ_SHRINK=1 lets fast-check shrink
// a failure to a smaller one (slower); FUZZ_MUTATION='<part of a mutation's name>' (requests.ts) sends only
// that class of input, one mutation per request.
import test from 'ava';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerCodeSystem } from '../../server/platform/access/organizations.js';
import { apiDocument, API_BASE_PATH } from '../../server/platform/spec.js';
import { apiContract } from '../support/api-contract.js';
import { startTestService, type TestService } from '../support/service.js';
import { fuzzOperations, idFields, type FuzzOperation } from './operations.js';
import { FORGED_HOST, requestArbitrary, toWire, type Draft, type RequestContext } from './requests.js';
import { judge, type Judge } from './requirements.js';
import { asCurl, closeConnections, describe, send, type WireRequest, type WireResponse } from './wire.js';
import { buildWorld, dataFingerprint, type World } from './world.js';
import { kyselyOver } from '../../server/platform/database/database.js';

type Json = Record<string, unknown>;

const document = apiDocument as unknown as Json;
const contract = apiContract; // responseContract(document), its validators compiled once for the run
const operations = fuzzOperations(document);
const baseSeed = Number(process.env.FUZZ_SEED ?? 1_122_2026);
// About 600 requests: 20 to 35 s on the shared 2-core machine (50 to 60 ms a request under load, less when idle).
const budget = Number(process.env.FUZZ_RUNS ?? 600);
const only = process.env.FUZZ_OP;
const replayPath = process.env.FUZZ_PATH;
const onlyMutation = process.env.FUZZ_MUTATION;
const FAILURE_DIR = join(tmpdir(), 'erp-fuzz-failures');
const weight = (op: FuzzOperation) => (op.method === 'GET' ? 1 : 2);
const totalWeight = operations.reduce((sum, op) => sum + weight(op), 0);

let service: TestService;
const api = () => service;
let world: World;
let ctx: RequestContext;
let rules: Judge;
const statuses = new Map<number, number>();

// One hook, so that the world is built only once the service runs (ava runs separate before hooks concurrently).
test.before(async () => {
  // Sixty days ahead of the real clock, so the examples' dates (2026-11-25) are long past their cut-off, and without
  // the scheduled jobs: the reconciliation would otherwise rewrite the examples' days whenever a minute turns, and a
  // refused write would seem to have changed data. The pass must not depend on the date it runs.
  // Without the service's own response validation (VALIDATE_RESPONSES=false, as in production): every answer is
  // judged here by the description's checker (exchangeAndJudge: status documented, headers and body valid), which
  // fails on what the service's validator would have turned into a 500, and more (headers). The validator compiled,
  // for each operation met, a schema per status and media type holding the whole description, and checked each of
  // the ~600 answers a second time: CPU of this file that proved nothing the checker does not.
  service = await startTestService('fuzz', {
    env: { TEST_CLOCK_OFFSET_DAYS: '60', VALIDATE_RESPONSES: 'false' },
    scheduledJobs: false,
  });
  world = await buildWorld(document, api().service.database.pool, new URL(api().baseUrl + API_BASE_PATH));
  ctx = { document, world, idFields: idFields(document) };
  rules = judge(document, world, ctx.idFields);
});
test.after.always(async () => {
  closeConnections();
  await service?.stop();
});

test.serial('the seeding sent every example of the description for both organisations', (t) => {
  // Not the subject of this file (the contract command's own tests are), but a fuzz pass over empty
  // organisations would reach little: say what failed.
  t.deepEqual([...world.own.seedingProblems, ...world.other.seedingProblems], []);
  t.true(world.foreignIds.size > 0);
});

test.serial('the data fingerprint that judges refused writes sees a change', async (t) => {
  // The check "a refused write changes nothing" is only as good as the digest: it must move when data moves.
  const pool = api().service.database.pool;
  const before = await dataFingerprint(pool, world.own.caller.organizationId);
  await registerCodeSystem(kyselyOver(pool), world.own.caller.organizationId, 'fuzzcheck');
  const after = await dataFingerprint(pool, world.own.caller.organizationId);
  t.deepEqual(
    Object.keys(after).filter((table) => after[table] !== before[table]),
    ['code_systems'],
  );
  await pool.query(`DELETE FROM code_systems WHERE organization_id = $1 AND name = 'fuzzcheck'`, [
    world.own.caller.organizationId,
  ]);
  t.deepEqual(await dataFingerprint(pool, world.own.caller.organizationId), before);
});

/** A per-operation seed: adding an operation does not change what the others generate. */
function seedOf(op: FuzzOperation): number {
  if (only) return baseSeed;
  return createHash('sha256').update(`${baseSeed}:${op.key}`).digest().readInt32LE(0);
}

interface Exchange {
  wire: WireRequest;
  response?: WireResponse;
  problems: string[];
  reasons: string[];
}

async function exchangeAndJudge(op: FuzzOperation, draft: Draft, sequence: string): Promise<Exchange> {
  const wire = toWire(op, draft, sequence);
  const reasons = rules.reasonsToRefuse(op, draft, wire);
  const pool = api().service.database.pool;
  const write = wire.method !== 'GET';
  const before = write ? await dataFingerprint(pool, world.own.caller.organizationId) : undefined;
  let response: WireResponse;
  try {
    response = await send(world.apiRoot, wire);
  } catch (error) {
    return { wire, problems: [`no answer: ${(error as Error).message}`], reasons };
  }
  statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  const problems: string[] = [];
  if (response.status >= 500) problems.push(`answered ${response.status}`);
  const path = wire.target.split('?')[0]!;
  problems.push(
    ...contract.check({
      method: wire.method,
      path,
      status: response.status,
      headers: response.headers,
      bodyText: response.bodyText,
    }),
  );
  if (response.status >= 400 && /json/.test(response.headers.get('content-type') ?? '')) {
    let code: unknown;
    try {
      code = (JSON.parse(response.bodyText) as Json).code;
    } catch {
      /* reported by the contract */
    }
    if (typeof code !== 'string') problems.push('a problem document without `code`');
  }
  if (reasons.length > 0 && response.status < 400)
    problems.push(`answered ${response.status} where the description requires a refusal: ${reasons.join('; ')}`);
  // The key before the body: without a valid key the answer is 401 (or the address's 429), whatever the body. Only
  // a key in the query string (400 key_in_query) and a body on an operation that takes none (refused unread) come first.
  if (reasons.includes('no valid API key (401)') && ![401, 429].includes(response.status)) {
    const code = /"code":"([a-z_]+)"/.exec(response.bodyText)?.[1];
    const bodyWithoutBodyOperation = wire.body !== undefined && !op.body && code === 'unknown_field';
    if (code !== 'key_in_query' && !bodyWithoutBodyOperation)
      problems.push(
        `answered ${response.status} ${code ?? ''} to a request without a valid key: 401 comes before anything about the body`,
      );
  }
  if (
    response.bodyText.includes(FORGED_HOST) ||
    [...response.headers.values()].some((value) => value.includes(FORGED_HOST))
  ) {
    problems.push(`the answer names the request's Host ${FORGED_HOST}: URLs come from PUBLIC_BASE_URL`);
  }
  if (response.status >= 200 && response.status < 300) {
    const carried = `${wire.target} ${wire.body?.toString('utf8') ?? ''}`;
    const leaked = [...world.foreignIds].filter((id) => response.bodyText.includes(id) && !carried.includes(id));
    if (leaked.length > 0) problems.push(`the answer shows another organisation's records: ${leaked.join(', ')}`);
  }
  if (before && (response.status < 200 || response.status >= 300)) {
    const after = await dataFingerprint(pool, world.own.caller.organizationId);
    const changed = Object.keys(after).filter((table) => after[table] !== before[table]);
    if (changed.length > 0) problems.push(`a refused write (${response.status}) changed ${changed.join(', ')}`);
  }
  return { wire, response, problems, reasons };
}

function report(
  op: FuzzOperation,
  seed: number,
  details: fc.RunDetails<[Draft]>,
  failure: Exchange | undefined,
  draft: Draft | undefined,
): string {
  const secrets = { KEY: world.own.caller.secret, NO_SCOPE_KEY: world.noScopeKey, READ_ONLY_KEY: world.readOnlyKey };
  const lines = [
    `${op.key}: ${failure?.problems.join('\n  ') ?? (details.errorInstance as Error | undefined)?.message ?? 'failed'}`,
    `mutations: ${draft?.labels.join(' | ') || '(none: a valid-leaning request)'}`,
    `the description requires a refusal because: ${failure?.reasons.join('; ') || '(nothing)'}`,
    `replay: FUZZ_OP='${op.key}' FUZZ_SEED=${seed} FUZZ_PATH=${details.counterexamplePath ?? ''} npm test -- test/fuzz/operations.fuzz.test.ts`,
  ];
  if (failure) {
    // A long body goes to a file, so that the curl line stays readable and still sends the very same bytes.
    let bodyFile: string | undefined;
    if (failure.wire.body && failure.wire.body.length > 4_096) {
      mkdirSync(FAILURE_DIR, { recursive: true });
      bodyFile = join(
        FAILURE_DIR,
        `${op.key.replace(/[^a-z0-9]+/gi, '_')}-${seed}-${(details.counterexamplePath ?? '').replace(/:/g, '_')}.body`,
      );
      writeFileSync(bodyFile, failure.wire.body);
    }
    lines.push(
      `request: ${describe(failure.wire, secrets)}${bodyFile ? `\nbody (${failure.wire.body!.length} bytes): ${bodyFile}` : ''}`,
      `curl: ${asCurl(world.apiRoot, failure.wire, secrets, bodyFile)}`,
    );
    if (failure.response)
      lines.push(
        `answer: ${failure.response.status} ${failure.response.headers.get('content-type') ?? ''} ${failure.response.bodyText.slice(0, 1_000)}`,
      );
  }
  return lines.join('\n');
}

for (const op of operations) {
  if (only && only !== op.key) continue;
  const numRuns = only
    ? Number(process.env.FUZZ_RUNS ?? 200)
    : Math.max(8, Math.round((budget * weight(op)) / totalWeight));
  test.serial(`${op.key}: every generated request gets a documented answer, never a 5xx`, async (t) => {
    const seed = seedOf(op);
    const failures = new Map<Draft, Exchange>();
    let sequence = 0;
    const requests = requestArbitrary(op, ctx, onlyMutation);
    if (!requests) {
      t.pass(`no mutation named like ${onlyMutation} applies`);
      return;
    }
    const property = fc.asyncProperty(requests, async (draft) => {
      sequence += 1;
      const exchange = await exchangeAndJudge(op, draft, `${seed}-${sequence}`);
      if (exchange.problems.length === 0) return true;
      failures.set(draft, exchange);
      return false;
    });
    const started = Date.now();
    const details = await fc.check(property, {
      seed,
      numRuns,
      path: replayPath,
      endOnFailure: !process.env.FUZZ_SHRINK,
    });
    t.log(`${details.numRuns} requests in ${Date.now() - started} ms (seed ${seed})`);
    if (!details.failed) {
      t.pass();
      return;
    }
    const draft = details.counterexample?.[0];
    t.fail(report(op, seed, details, draft ? failures.get(draft) : undefined, draft));
  });
}

test.after.always('statuses', () => {
  if (statuses.size > 0)
    console.log(
      `fuzz answers by status: ${[...statuses]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}: ${n}`)
        .join(', ')}`,
    );
});
