// HTTP of the DMS: the documents push (one document or a batch; stored, flagged, then posted) and the flags pull.
// The push's body is checked here, not by the request validator (see canonical.ts): a document that does not match
// its schema gets a rejected flag of its own instead of failing the whole batch.
import type { Router } from 'express';
import { actorOf, callerOf } from '../../platform/access/context.js';
import type { Db } from '../../platform/database/transaction.js';
import { timestampProblem, toUtc } from '../../platform/dates.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { respondIdempotently } from '../../platform/http/idempotency.js';
import { apiRouter } from '../../platform/http/router.js';
import { listRequestOf, sendPage } from '../../platform/lists/http.js';
import { MAX_BATCH, MAX_SYNCHRONOUS_BATCH, requireConnection, type DmsConnectionRow } from './connections.js';
import { findFileBatch, receiveFile } from './files.js';
import { fileOf } from '../../platform/http/file-body.js';
import { fileXsd, flagFile, FLAGS_XSD } from './xml/write.js';
import { precompressed, type PrecompressedDocument } from '../../platform/http/precompressed.js';
import { findFlags, listFlags, toFlag } from './flags.js';
import { ingestBatch } from './ingest.js';
import { contextOf, postReceived } from './process.js';

/** The documents of a push body: `{ documents: [...] }` or one document; anything else is 400 naming the field. */
export function documentsOf(body: unknown, synchronous: boolean): unknown[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError(
      'invalid_field',
      'The body is one DMS document (an object with documentType) or a batch { "documents": [...] }.',
      [{ field: '/', code: 'invalid_field', message: 'a document or { documents: [...] }' }],
    );
  }
  const record = body as Record<string, unknown>;
  if (!('documents' in record)) return [body];
  const extra = Object.keys(record).filter((key) => key !== 'documents');
  if (extra.length > 0)
    throw new ApiError(
      'unknown_field',
      `A batch has only documents; ${extra.join(', ')} is not a field of it.`,
      extra.map((key) => ({ field: `/${key}`, code: 'unknown_field' as const, message: 'not a field of a batch' })),
    );
  const documents = record.documents;
  const max = synchronous ? MAX_SYNCHRONOUS_BATCH : MAX_BATCH;
  if (!Array.isArray(documents) || documents.length === 0 || documents.length > max) {
    const why = !Array.isArray(documents)
      ? 'must be an array of documents'
      : `holds 1 to ${max} documents${synchronous ? ' (this connection is synchronous)' : ''}; this one ${documents.length}`;
    throw new ApiError('invalid_field', `documents ${why}.`, [
      { field: '/documents', code: 'invalid_field', message: why },
    ]);
  }
  return documents;
}

export function dmsRoutes(db: Db): Router {
  const router = apiRouter();

  router.post('/dms/:system/documents', async (req, res) => {
    const caller = callerOf(res);
    const connection = await requireConnection(db, caller.actor.organization.id, req.params.system as string);
    const documents = documentsOf(req.body, connection.synchronous);
    await respondIdempotently(db, caller, req, res, async (tx) => {
      const batch = await ingestBatch(tx, connection, documents);
      if (connection.synchronous) await postReceived(tx, await contextOf(tx, connection), batch.received);
      const flags = connection.synchronous
        ? await findFlags(
            tx,
            connection.organization_id,
            batch.flags.map((flag) => flag.id),
          )
        : batch.flags;
      return {
        status: connection.synchronous ? 200 : 202,
        body: { batchId: batch.batchId, synchronous: connection.synchronous, flags: flags.map(toFlag) },
      };
    });
  });

  router.get('/dms/:system/flags', async (req, res) => {
    const actor = actorOf(res);
    const connection = await requireConnection(db, actor.organization.id, req.params.system as string);
    const query = req.query as { since?: string; state?: string };
    const problem = query.since === undefined ? null : timestampProblem(query.since);
    if (problem)
      throw new ApiError('invalid_field', `since ${problem}.`, [
        { field: '/query/since', code: 'invalid_field', message: problem },
      ]);
    const page = await listFlags(db, actor.organization.id, connection.id, listRequestOf(req), {
      since: query.since === undefined ? undefined : toUtc(query.since),
      state: query.state,
    });
    sendPage(res, { ...page, rows: page.rows.map(toFlag) });
  });

  router.post('/dms/:system/files', async (req, res) => {
    const caller = callerOf(res);
    const connection = await requireConnection(db, caller.actor.organization.id, req.params.system as string);
    const file = fileOf(res);
    await respondIdempotently(db, caller, req, res, async (tx) => {
      const { batchId, created } = await receiveFile(tx, connection, file);
      return { status: created ? 202 : 200, body: (await findFileBatch(tx, connection, batchId))! };
    });
  });

  router.get('/dms/:system/files/:batchId', async (req, res) => {
    const actor = actorOf(res);
    const connection = await requireConnection(db, actor.organization.id, req.params.system as string);
    res.json(await requireFileBatch(db, connection, req.params.batchId as string));
  });

  router.get('/dms/:system/files/:batchId/flags', async (req, res) => {
    const actor = actorOf(res);
    const connection = await requireConnection(db, actor.organization.id, req.params.system as string);
    const batch = await requireFileBatch(db, connection, req.params.batchId as string);
    const ids = (
      await db
        .selectFrom('dms_documents')
        .select('id')
        .where('organization_id', '=', connection.organization_id)
        .where('batch_id', '=', batch.batchId)
        .orderBy('position')
        .execute()
    ).map((row) => row.id);
    res
      .type('application/xml')
      .send(flagFile(batch, (await findFlags(db, connection.organization_id, ids)).map(toFlag)));
  });

  // The XML schemas of the files, for DMS vendors (no key: they are documentation).
  // Each written once, on its first request, and served compressed with its ETag (see precompressed.ts).
  const schemas: Record<string, () => string> = { 'dms-file.xsd': fileXsd, 'dms-flags.xsd': () => FLAGS_XSD };
  const written = new Map<string, PrecompressedDocument>();
  router.get('/xml-schemas/:name', async (req, res) => {
    const name = req.params.name as string;
    const write = Object.hasOwn(schemas, name) ? schemas[name] : undefined;
    if (!write)
      throw new ApiError(
        'not_found',
        `There is no XML schema ${name}; there are ${Object.keys(schemas).join(' and ')}.`,
      );
    let document = written.get(name);
    if (!document) written.set(name, (document = precompressed(write(), 'application/xml; charset=utf-8')));
    await document.send(req, res);
  });

  return router;
}

async function requireFileBatch(db: Db, connection: DmsConnectionRow, batchId: string) {
  const batch = await findFileBatch(db, connection, batchId);
  if (!batch) throw new ApiError('not_found', `The ${connection.system} connection has no file batch ${batchId}.`);
  return batch;
}
