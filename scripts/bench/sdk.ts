// The SDK part of `npm run bench`: what the SDK costs a partner on top of plain fetch.
//   - a full change-feed walk through `paginate` (retry wrapper, openapi-fetch, typed errors) against the same
//     service as a plain fetch loop, alternated so that both see the same machine state;
//   - verifyWebhook on a typical delivery (HMAC-SHA256 of a 2 KB body, header parsing, envelope check).
import { createHmac } from 'node:crypto';
import { createErpClient, paginate, verifyWebhook } from '../../client-sdk/src/index.js';

export interface SdkFigures {
  /** Records/s of each walk, plain fetch and SDK, alternated. */
  fetchWalks: number[];
  sdkWalks: number[];
  verificationsPerSecond: number[];
}

export async function benchSdk(port: number, key: string, walks = 3): Promise<SdkFigures> {
  const baseUrl = `http://127.0.0.1:${port}/api/v1`;
  const erp = createErpClient({ apiKey: key, baseUrl });
  const query = { updatedSince: '2000-01-01T00:00:00.000Z', limit: 100 };
  const fetchWalks: number[] = [];
  const sdkWalks: number[] = [];
  for (let walk = 0; walk < walks; walk += 1) {
    fetchWalks.push(
      await timed(async () => {
        let records = 0;
        let cursor: string | null = null;
        do {
          const url = `${baseUrl}/customers?updatedSince=${query.updatedSince}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
          const response = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
          if (!response.ok) throw new Error(`feed walk: ${response.status}`);
          const page = (await response.json()) as { data: unknown[]; nextCursor: string | null };
          records += page.data.length;
          cursor = page.nextCursor;
        } while (cursor);
        return records;
      }),
    );
    sdkWalks.push(
      await timed(async () => {
        let records = 0;
        for await (const _customer of paginate(erp, '/customers', { query })) records += 1;
        return records;
      }),
    );
  }
  return { fetchWalks, sdkWalks, verificationsPerSecond: benchVerification() };
}

async function timed(walk: () => Promise<number>): Promise<number> {
  const started = performance.now();
  const records = await walk();
  return records / ((performance.now() - started) / 1000);
}

function benchVerification(batches = 5, perBatch = 20_000): number[] {
  const secret = 'whsec_' + 'k'.repeat(32);
  const object = {
    id: 'cus_01JD4R7Q8S6T9V3X5Z7B9D1F3H',
    name: 'Mama Grace Shop',
    notes: 'x'.repeat(1_800),
    updatedAt: '2026-11-22T08:15:30.125Z',
  };
  const body = JSON.stringify({
    id: 'evt_01JD4R7Q8S6T9V3X5Z7B9D1F3H',
    type: 'customer.updated',
    createdAt: '2026-11-22T08:15:30.125Z',
    apiVersion: 'v1',
    organizationId: 'org_1',
    data: { object },
  });
  const t = Math.floor(Date.now() / 1000);
  const header = `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
  const rates: number[] = [];
  for (let batch = 0; batch < batches; batch += 1) {
    const started = performance.now();
    for (let i = 0; i < perBatch; i += 1) verifyWebhook(body, header, secret);
    rates.push(perBatch / ((performance.now() - started) / 1000));
  }
  return rates;
}
