// GET / (issue 19, part 8): the bare host tells a developer where the reference page, the OpenAPI document and the
// health check are. Before, it was a 404 problem that mentioned only /api/v1/openapi.json.
import test from 'ava';
import { apiDocument, apiVersion } from '../../server/platform/spec.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);

test('GET / answers JSON links to /api/v1/docs, /api/v1/openapi.json and /api/v1/health, each of which answers 200', async (t) => {
  const res = await fetch(`${api().baseUrl}/`);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
  t.deepEqual(await res.json(), {
    name: apiDocument.info.title,
    version: apiVersion,
    docs: '/api/v1/docs',
    openapi: '/api/v1/openapi.json',
    health: '/api/v1/health',
  });
  const [docs, openapi, health] = await Promise.all(
    ['/api/v1/docs', '/api/v1/openapi.json', '/api/v1/health'].map((path) => fetch(`${api().baseUrl}${path}`)),
  );
  t.is(docs!.status, 200);
  t.regex(docs!.headers.get('content-type') ?? '', /^text\/html/);
  t.is(openapi!.status, 200);
  t.is(((await openapi!.json()) as { info: { version: string } }).info.version, apiVersion);
  t.is(health!.status, 200);
});

test('GET / is a signpost, not an operation: the spec has no path "/" and other methods on / stay 404', async (t) => {
  t.false('/' in apiDocument.paths);
  const res = await fetch(`${api().baseUrl}/`, { method: 'POST' });
  t.is(res.status, 404);
  t.like(await res.json(), { code: 'not_found' });
});
