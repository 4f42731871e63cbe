import test from 'ava';
// The source, as the other SDK tests use it; the built and packed package is proven by packed-sdk.test.ts
// (the only test that writes client-sdk/dist, so no two test files build it at once).
import * as sdk from '../../client-sdk/src/index.js';
import { apiVersion } from '../../server/platform/spec.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);

test('the SDK reads /health from a running server, typed by the spec', async (t) => {
  const erp = sdk.createErpClient({ baseUrl: `${api().baseUrl}/api/v1` });
  const { data, response } = await erp.GET('/health', { headers: { 'X-Request-Id': 'sdk-health-1' } });
  t.like(data, { status: 'ok', version: apiVersion, environment: 'sandbox' });
  t.is(response.headers.get('x-request-id'), 'sdk-health-1');
});

test('the SDK sends the API key as a bearer token and rejects with the problem document as ErpApiError', async (t) => {
  const erp = sdk.createErpClient({ baseUrl: `${api().baseUrl}/api/v1`, apiKey: 'erp_abc_test_notarealkey' });
  const error = await t.throwsAsync(erp.GET('/me'), { instanceOf: sdk.ErpApiError });
  t.like(error, { status: 401, code: 'unauthorized' });
});
