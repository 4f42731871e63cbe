// The response contract's validators compiled once, as code (Ajv's standalone output), for a run of many processes
// that check answers against the same description: `npm test` writes them before its files start (scripts/test.ts),
// and each test process loads them instead of compiling, on first use, the validator of every operation it calls
// (0.25-0.4 CPU-s an HTTP test file; decision 0057). Same options as response-contract.ts's own (responseAjv), and
// a body schema missing from the file is compiled there as before.
import type { ValidateFunction } from 'ajv/dist/2020.js';
import standaloneModule from 'ajv/dist/standalone/index.js';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { bodySchemaPointers, responseAjv, type PrecompiledValidators } from './response-contract.js';

type Json = Record<string, unknown>;
const standaloneCode = standaloneModule as unknown as (
  ajv: ReturnType<typeof responseAjv>,
  refs: Record<string, string>,
) => string;

/** Writes a CommonJS module of every body schema's validator of `document`, and `pointers` (JSON pointer -> export). */
export function writePrecompiledValidators(document: Json, file: string): void {
  const ajv = responseAjv({ source: true });
  ajv.addSchema(document, 'api', undefined, false);
  const names = new Map(bodySchemaPointers(document).map((pointer, index) => [pointer, `v${index}`]));
  for (const [pointer, name] of names) ajv.addSchema({ $ref: `api#${pointer}` }, name, undefined, false);
  const code = standaloneCode(ajv, Object.fromEntries([...names.values()].map((name) => [name, name])));
  writeFileSync(file, `${code}\nmodule.exports.pointers = ${JSON.stringify(Object.fromEntries(names))};\n`);
}

/** The validators of a file writePrecompiledValidators wrote (an absolute path), by pointer. */
export function loadPrecompiledValidators(file: string): PrecompiledValidators {
  const module = createRequire(import.meta.url)(file) as Record<string, ValidateFunction> & {
    pointers: Record<string, string>;
  };
  return new Map(Object.entries(module.pointers).map(([pointer, name]) => [pointer, module[name]!]));
}
