import test from 'ava';
import { readFileSync } from 'node:fs';
import { apiReferenceScriptPath, scalarBundle } from '../../server/modules/system/api-reference.js';
import { API_BASE_PATH, apiDocument } from '../../server/platform/spec.js';
import { useSharedService } from '../support/service.js';
import { CHROMIUM_MISSING, findChromium, launchChromium } from './chromium.js';

type Json = Record<string, any>;
const api = useSharedService(test);
const METHODS = ['get', 'put', 'post', 'patch', 'delete'];
const operations = Object.entries(apiDocument.paths).flatMap(([path, item]) =>
  METHODS.filter((m) => (item as Json)[m]).map((method) => ({
    method: method.toUpperCase(),
    path,
    summary: (item as Json)[method].summary as string,
  })),
);
const scriptTemplate = '/docs/scalar/{version}/api-reference.js';

test('GET /api/v1/docs answers without a key: an HTML page under a policy that allows only its own origin', async (t) => {
  const res = await api().request('GET', '/docs');
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/html; charset=utf-8$/);
  t.is(res.headers.get('x-content-type-options'), 'nosniff');
  const policy = res.headers.get('content-security-policy') ?? '';
  const directives = new Map(
    policy
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...sources]) => [name!, sources]),
  );
  t.deepEqual(directives.get('default-src'), ["'none'"]);
  t.deepEqual(directives.get('script-src'), ["'self'"], 'no inline script, no eval');
  t.deepEqual(directives.get('connect-src'), ["'self'"]);
  t.deepEqual(directives.get('frame-ancestors'), ["'none'"]);
  t.notRegex(policy, /https?:|\*/, 'no other origin, no wildcard');
  t.true(res.text.includes(`<script src="${apiReferenceScriptPath}"></script>`));
  t.true(res.text.includes(`data-url="${API_BASE_PATH}/openapi.json"`));
});

test("the page's script is the installed Scalar bundle, served as JavaScript and cacheable for good under its versioned URL", async (t) => {
  t.is(apiReferenceScriptPath, `${API_BASE_PATH}/docs/scalar/${scalarBundle.version}/api-reference.js`);
  const res = await api().request('GET', apiReferenceScriptPath.slice(API_BASE_PATH.length));
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'text/javascript; charset=utf-8');
  t.is(res.headers.get('x-content-type-options'), 'nosniff');
  t.is(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  const installed = readFileSync(
    new URL('../../node_modules/@scalar/api-reference/dist/browser/standalone.js', import.meta.url),
    'utf8',
  );
  t.is(res.text.length, installed.length);
  t.true(res.text === installed);
});

test('a script version other than the installed one is 404 not_found (an immutable URL never changes content)', async (t) => {
  const res = await api().request('GET', '/docs/scalar/0.0.1/api-reference.js');
  t.is(res.status, 404);
  t.is(res.body.code, 'not_found');
  t.true(res.body.detail.includes(apiReferenceScriptPath));
});

test("the spec's example script version is the installed one, so a contract run fetches the real script", (t) => {
  const parameter = (apiDocument.paths[scriptTemplate] as Json).get.parameters.find((p: Json) => p.name === 'version');
  t.is(
    parameter.example,
    scalarBundle.version,
    `update the example in spec/paths/system/docs-script.yaml to ${scalarBundle.version}`,
  );
});

test('GET /docs at the root redirects (308) to /api/v1/docs', async (t) => {
  const res = await fetch(`${api().baseUrl}/docs`, { redirect: 'manual' });
  t.is(res.status, 308);
  t.is(res.headers.get('location'), `${API_BASE_PATH}/docs`);
  t.truthy(res.headers.get('x-request-id'));
});

test('in headless Chromium the page lists every operation of the description and fetches nothing from another origin', async (t) => {
  const executablePath = findChromium();
  if (!executablePath) return t.fail(CHROMIUM_MISSING);
  const origin = new URL(api().baseUrl).origin;
  const browser = await launchChromium(executablePath);
  try {
    const page = await browser.newPage();
    const requested: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('requestfailed', (request) =>
      problems.push(`request failed: ${request.url()} (${request.failure()?.errorText})`),
    );
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} for ${response.url()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning')
        problems.push(`console ${message.type()}: ${message.text()}`);
    });
    // Scalar's validation library (Zod) probes for eval with Function('') in a try/catch and falls back without
    // it; that refusal is the policy working. Any other violation (a style, an image, a fetch, a script) counts.
    await page.exposeFunction('reportViolation', (text: string) => problems.push(`policy violation: ${text}`));
    await page.addInitScript(`document.addEventListener('securitypolicyviolation', (e) => {
      if (!(e.effectiveDirective === 'script-src' && e.blockedURI === 'eval')) reportViolation(e.effectiveDirective + ' ' + e.blockedURI);
    })`);

    const response = await page.goto(`${api().baseUrl}${API_BASE_PATH}/docs`);
    t.is(response?.status(), 200);
    // Rendered: the sidebar links each operation as #tag/<tag>/<METHOD><path>. Closed tag groups list nothing, so
    // each is opened, as a reader would.
    await page.locator('aside a[href*="/GET/"]').first().waitFor({ timeout: 15_000 });
    const closedGroups = page.getByRole('button', { name: /^Open Group - / });
    for (let opened = 0; (await closedGroups.count()) > 0 && opened < 100; opened++) await closedGroups.first().click();
    const entries = (await page
      .locator('aside a[href^="#tag/"]')
      .evaluateAll((links) =>
        links.map((link) => [link.getAttribute('href'), (link as unknown as { innerText: string }).innerText]),
      )) as [string, string][];

    t.true(operations.length > 0);
    const missing = operations.filter(
      ({ method, path, summary }) =>
        !entries.some(
          ([href, label]) => href.endsWith(`/${method}${path}`) && label.split('\n')[0]!.trim() === summary,
        ),
    );
    t.deepEqual(missing, [], 'every operation appears in the sidebar with its method, path and summary');

    t.true(
      requested.some((url) => url.endsWith('/api/v1/openapi.json')),
      "the page read the service's own description",
    );
    t.true(requested.some((url) => url.endsWith(apiReferenceScriptPath)));
    t.deepEqual(
      requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:')),
      [],
      "every request goes to the service's own origin",
    );
    t.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});

// Serial: ava runs serial tests first, so this browser does not compete with the other test's for the CPU.
test.serial(
  "in headless Chromium an operation's request panel offers only the description's samples, curl and the SDK, and shows the SDK call",
  async (t) => {
    const executablePath = findChromium();
    if (!executablePath) return t.fail(CHROMIUM_MISSING);
    const samples = (apiDocument.paths['/customers'] as Json).post['x-codeSamples'] as {
      label: string;
      source: string;
    }[];
    const sdk = samples.find((sample) => sample.label === 'SDK')!.source;
    t.true(sdk.includes('createErpClient('), 'npm run generate wrote the SDK sample');
    const browser = await launchChromium(executablePath);
    try {
      const page = await browser.newPage();
      await page.goto(`${api().baseUrl}${API_BASE_PATH}/docs#tag/customers/POST/customers`, { timeout: 60_000 });
      const section = page.locator('section[id$="/tag/customers/POST/customers"]');
      const code = section.locator('pre code').first();
      // curl comes first and is what the panel shows at once.
      await code.waitFor({ timeout: 15_000 });
      t.is((await code.innerText()).trimEnd(), samples.find((sample) => sample.label === 'curl')!.source);
      await section.locator('[data-testid="client-picker"]').click();
      const options = page.getByRole('option');
      await options.first().waitFor({ timeout: 5_000 });
      t.deepEqual(
        await options.allInnerTexts(),
        ['curl', 'SDK'],
        "no generic client of Scalar's (fetch, Python, ...) besides ours",
      );
      await page.getByRole('option', { name: 'SDK' }).click();
      await section.locator('pre code', { hasText: 'createErpClient' }).first().waitFor({ timeout: 5_000 });
      t.is((await code.innerText()).trimEnd(), sdk);
    } finally {
      await browser.close();
    }
  },
);
