// The bundled API description (generated/openapi.json), read once. It is the single source of the API
// version, the validator's rules and, later, each operation's scope.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

export const API_BASE_PATH = '/api/v1';

const documentPath = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'generated', 'openapi.json');

/** The document as served by GET /openapi.json, byte for byte. */
export const apiDocumentText: string = readFileSync(documentPath, 'utf8');
export const apiDocument: ApiDocument = JSON.parse(apiDocumentText) as ApiDocument;
export const apiVersion: string = apiDocument.info.version;
