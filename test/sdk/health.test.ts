import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { useTestService } from '../support/service.js';

const api = useTestService(test, 'sdk');
type Sdk = typeof import('../../client-sdk/dist/index.js');
let sdk: Sdk;

test.before('the SDK builds with tsc', async () => {
  await promisify(execFile)(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'client-sdk/tsconfig.json']);
  sdk = await import('../../client-sdk/dist/index.js');
});

test('the SDK built with tsc reads /health from a running server, typed by the spec', async (t) => {
  const erp = sdk.createErpClient({ baseUrl: `${api().baseUrl}/api/v1` });
  const { data, error, response } = await erp.GET('/health', { headers: { 'X-Request-Id': 'sdk-health-1' } });
  t.is(error, undefined);
  t.like(data, { status: 'ok', version: '1.13.0', environment: 'sandbox' });
  t.is(response.headers.get('x-request-id'), 'sdk-health-1');
});

test('the SDK sends the API key as a bearer token and returns problem documents as typed errors', async (t) => {
  const erp = sdk.createErpClient({ baseUrl: `${api().baseUrl}/api/v1`, apiKey: 'erp_abc_test_notarealkey' });
  const { data, error, response } = await erp.GET('/me');
  t.is(data, undefined);
  t.is(response.status, 401);
  t.like(error, { code: 'unauthorized', status: 401 });
});
