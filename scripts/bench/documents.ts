// `npm run bench`: a download of GET /api/v1/openapi.json (750 KB of JSON) as it is, gzip and brotli, from a running
// service: bytes on the wire and median time per download, one at a time (docs/decisions/0027). The service
// compresses once per process, so the first compressed download (which waits for it) is left out of the median.
import { request } from 'node:http';

export interface DocumentFigures {
  rows: { coding: string; bytes: number; medianMs: number }[];
}

const DOWNLOADS = 30;

function download(port: number, acceptEncoding: string | null): Promise<{ bytes: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/api/v1/openapi.json',
        headers: acceptEncoding ? { 'Accept-Encoding': acceptEncoding } : {},
      },
      (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        res.on('end', () =>
          res.statusCode === 200
            ? resolve({ bytes, ms: Number(process.hrtime.bigint() - started) / 1e6 })
            : reject(new Error(`GET /openapi.json answered ${res.statusCode}`)),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

export async function benchDocuments(port: number): Promise<DocumentFigures> {
  const rows: DocumentFigures['rows'] = [];
  for (const [coding, header] of [
    ['identity', null],
    ['gzip', 'gzip'],
    ['br', 'br'],
  ] as const) {
    await download(port, header); // the first compressed one waits for the compression
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < DOWNLOADS; i += 1) {
      const answer = await download(port, header);
      times.push(answer.ms);
      bytes = answer.bytes;
    }
    times.sort((a, b) => a - b);
    rows.push({ coding, bytes, medianMs: times[Math.floor(times.length / 2)]! });
  }
  return { rows };
}

export function printDocuments(figures: DocumentFigures): void {
  console.log('\nGET /openapi.json download, one at a time (median of 30)');
  for (const row of figures.rows)
    console.log(`  ${row.coding.padEnd(9)} ${String(row.bytes).padStart(8)} bytes  ${row.medianMs.toFixed(2)} ms`);
}
