// The large documents the service answers without a key (/openapi.json, the /docs page and its script, the DMS XML
// schemas) never change while a process runs: each is compressed once (gzip and brotli) and carries a strong ETag, so
// a client that accepts compression gets a tenth of the bytes, and one that has it already gets 304 and none.
// Compressing per request would spend on every download the CPU the budget per address is there to bound.
// See docs/decisions/0027-budget-per-address-for-keyless-requests.md.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Request, Response } from 'express';

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/** Smaller than this, a document is sent as it is: compression would save less than the headers it adds. */
const WORTH_COMPRESSING = 1_024;

type Coding = 'br' | 'gzip' | 'identity';

interface Variants {
  identity: Buffer;
  gzip: Buffer | null;
  br: Buffer | null;
}

export interface PrecompressedDocument {
  /** The strong ETag of the uncompressed bytes; a compressed variant's is this with `-gzip` or `-br` inside the quotes. */
  readonly etag: string;
  readonly contentType: string;
  /** Answers the request: 304 when If-None-Match names the document, else the variant the client accepts best. */
  send(req: Request, res: Response): Promise<void>;
}

/**
 * A document compressed once per process. The compression runs in libuv's thread pool, not on the event loop, and
 * starts on the first request that wants it: a process (or a test) that never serves the document never pays for it,
 * and every later request is served the same buffers. gzip at its default level and brotli at quality 5: measured
 * on the 750 KB /openapi.json, about 40 ms and 160 ms once, for 88 KB and 75 KB; brotli's quality 11 would take
 * 6 s for 62 KB, and 17 s on the 4 MB script.
 */
export function precompressed(body: string | Buffer, contentType: string): PrecompressedDocument {
  const identity = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const hash = createHash('sha256').update(identity).digest('base64url').slice(0, 32);
  const etag = `"${hash}"`;
  const etags: Record<Coding, string> = { identity: etag, gzip: `"${hash}-gzip"`, br: `"${hash}-br"` };
  let variants: Promise<Variants> | null = null;
  const compressed = () => {
    if (!variants) {
      variants =
        identity.length < WORTH_COMPRESSING
          ? Promise.resolve({ identity, gzip: null, br: null })
          : Promise.all([
              gzipAsync(identity),
              brotliAsync(identity, {
                params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length },
              }),
            ]).then(([gz, br]) => ({ identity, gzip: gz, br }));
      variants.catch(() => {
        variants = null;
      }); // a failed compression is tried again by the next request
    }
    return variants;
  };

  return {
    etag,
    contentType,
    async send(req, res) {
      const wanted = preferredCoding(req.headers['accept-encoding']);
      const all = wanted === 'identity' ? { identity, gzip: null, br: null } : await compressed();
      const coding: Coding = wanted !== 'identity' && all[wanted] ? wanted : 'identity';
      res.setHeader('Vary', 'Accept-Encoding');
      res.setHeader('ETag', etags[coding]);
      // Any of the document's ETags proves the client holds the document (If-None-Match compares weakly, RFC 9110
      // 13.1.2): a client that switched its Accept-Encoding still gets its 304.
      if (noneMatchHits(req.headers['if-none-match'], Object.values(etags))) {
        res.status(304).end();
        return;
      }
      if (coding !== 'identity') res.setHeader('Content-Encoding', coding);
      res.type(contentType).send(coding === 'identity' ? identity : all[coding]!);
    },
  };
}

/**
 * The coding to send, from Accept-Encoding: brotli when accepted at least as much as gzip (it is the smaller), else
 * gzip, else none. A coding named with q=0 is refused; `*` stands for every coding not named.
 */
export function preferredCoding(header: string | string[] | undefined): Coding {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  const weights = new Map<string, number>();
  for (const part of text.split(',')) {
    const [name, ...parameters] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = parameters.map((p) => /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p)).find(Boolean);
    const weight = q ? Number(q[1]) : 1;
    weights.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const weight = (coding: string) => weights.get(coding) ?? weights.get('*') ?? 0;
  const br = weight('br');
  const gz = Math.max(weight('gzip'), weights.get('x-gzip') ?? 0);
  if (br > 0 && br >= gz) return 'br';
  if (gz > 0) return 'gzip';
  return 'identity';
}

function noneMatchHits(header: string | undefined, etags: string[]): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((candidate) => etags.includes(candidate.trim().replace(/^W\//, '')));
}
