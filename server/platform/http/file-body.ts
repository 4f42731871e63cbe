// The body of an operation that takes a file (the spec gives it `application/xml` or `multipart/form-data`, and a
// maxLength): read whole into memory up to that limit, as bytes, never decoded or parsed here. `application/xml`
// is the file itself; `multipart/form-data` (busboy) must carry exactly one file part. Over the limit is 413
// payload_too_large (the reading stops there), another media type or a Content-Encoding is 415
// unsupported_media_type, an empty file or a multipart body without exactly one file is 400 invalid_field naming
// `/file`. The route gets the bytes from `fileOf(res)`; `req.body` becomes the file's SHA-256, size and name, what
// the Idempotency-Key's request hash and the API log see instead of megabytes.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import type { RequestHandler, Response } from 'express';
import { ApiError } from '../errors/api-error.js';
import { operationOf } from './known-operation.js';

export interface UploadedFile {
  bytes: Buffer;
  /** The part's file name (multipart), or null. */
  name: string | null;
}

export function fileBody(): RequestHandler {
  return (req, res, next) => {
    const operation = operationOf(res);
    if (!operation?.file) {
      next();
      return;
    }
    const { maxBytes } = operation.file;
    const [type = '', ...parameters] = (req.headers['content-type'] ?? '')
      .split(';')
      .map((part) => part.trim().toLowerCase());
    const accepted = 'send the file as application/xml, or as one file part of multipart/form-data';
    const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (encoding !== 'identity') {
      next(
        new ApiError(
          'unsupported_media_type',
          `Content-Encoding ${encoding} is not accepted for a file: ${accepted}, not encoded.`,
        ),
      );
      return;
    }
    const charset = parameters
      .find((p) => p.startsWith('charset='))
      ?.slice('charset='.length)
      .replace(/"/g, '');
    const done = (file: UploadedFile) => {
      if (file.bytes.length === 0) {
        next(
          new ApiError('invalid_field', 'The file is empty.', [
            { field: '/file', code: 'invalid_field', message: 'an empty file' },
          ]),
        );
        return;
      }
      res.locals.file = file;
      req.body = {
        file: {
          sha256: createHash('sha256').update(file.bytes).digest('hex'),
          bytes: file.bytes.length,
          name: file.name,
        },
      };
      next();
    };
    if (type === 'application/xml' && (charset === undefined || charset === 'utf-8')) {
      readAll(req, maxBytes).then((bytes) => done({ bytes, name: null }), next);
      return;
    }
    if (type === 'multipart/form-data') {
      readMultipart(req, maxBytes).then(done, next);
      return;
    }
    next(
      new ApiError(
        'unsupported_media_type',
        `Content-Type ${req.headers['content-type'] ?? '(none)'} is not accepted here: ${accepted} (UTF-8).`,
      ),
    );
  };
}

/** The file the request carried (set by fileBody). */
export function fileOf(res: Response): UploadedFile {
  return res.locals.file as UploadedFile;
}

const tooLarge = (maxBytes: number) =>
  new ApiError(
    'payload_too_large',
    `The file is larger than the ${maxBytes} bytes (${maxBytes / 1024 / 1024} MB) accepted.`,
  );

const malformed = (why: string) =>
  new ApiError('invalid_field', `The multipart body cannot be read: ${why}.`, [
    { field: '/file', code: 'invalid_field', message: 'a malformed multipart body' },
  ]);
const cutShort = () =>
  new ApiError(
    'invalid_field',
    'The upload ended before its body was complete (the connection closed or the request timed out).',
    [{ field: '/file', code: 'invalid_field', message: 'an incomplete upload' }],
  );

/**
 * Settles once: every way a read can end (all bytes, too many, a broken or aborted connection, a parser error)
 * calls it, and only the first counts. A promise left pending would hold the request, and an error event with no
 * listener would end the process.
 */
function once<T>(resolve: (value: T) => void, reject: (error: unknown) => void) {
  let settled = false;
  return {
    resolve: (value: T) => {
      if (!settled) {
        settled = true;
        resolve(value);
      }
    },
    reject: (error: unknown) => {
      if (!settled) {
        settled = true;
        reject(error);
      }
    },
  };
}

function readAll(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const done = once(resolve, reject);
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBytes) {
      done.reject(tooLarge(maxBytes));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off('data', onData);
        done.reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => done.resolve(Buffer.concat(chunks)));
    req.on('error', () => done.reject(cutShort()));
    req.on('close', () => {
      if (!req.complete) done.reject(cutShort());
    });
  });
}

function readMultipart(req: IncomingMessage, maxBytes: number): Promise<UploadedFile> {
  return new Promise((resolve, reject) => {
    const done = once(resolve, reject);
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 2, fileSize: maxBytes, fields: 20, parts: 22 } });
    } catch (error) {
      done.reject(malformed((error as Error).message));
      return;
    }
    const files: UploadedFile[] = [];
    let failed: ApiError | null = null;
    const stop = (error: ApiError) => {
      req.unpipe(parser);
      parser.removeAllListeners('close');
      parser.on('error', () => {}); // anything it says after this is about a request already answered
      done.reject(error);
    };
    parser.on('file', (_field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => {
        failed ??= tooLarge(maxBytes);
      });
      // busboy emits the part's error (such as "Unexpected end of form" on a body without its closing boundary) on
      // the file stream as well as on the parser: unheard, it would end the process.
      stream.on('error', (error: Error) => stop(malformed(error.message)));
      stream.on('close', () => files.push({ bytes: Buffer.concat(chunks), name: info.filename ?? null }));
    });
    parser.on('filesLimit', () => {
      failed ??= oneFile();
    });
    parser.on('error', (error: Error) => stop(malformed(error.message)));
    parser.on('close', () => {
      if (failed) done.reject(failed);
      else if (files.length !== 1) done.reject(oneFile());
      else done.resolve(files[0]!);
    });
    req.on('error', () => stop(cutShort()));
    req.on('close', () => {
      if (!req.complete) stop(cutShort());
    });
    req.pipe(parser);
  });
}

const oneFile = () =>
  new ApiError('invalid_field', 'A multipart body carries exactly one file part (the DMS file).', [
    { field: '/file', code: 'invalid_field', message: 'exactly one file part' },
  ]);
