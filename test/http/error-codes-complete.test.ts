// One complete error catalogue: every code a caller can meet, as a problem's `code` or a field's `code` in
// `errors[]`, whether the spec shows it or the service sends it, resolves at GET /errors/{code}.
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { apiDocument } from '../../server/platform/spec.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);

/** Every `code` of a problem or of an `errors[]` member that appears anywhere in the bundled spec (examples, enums). */
function codesInSpec(): Set<string> {
  const codes = new Set<string>();
  const walk = (node: unknown, parentKey: string): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item, parentKey);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const object = node as Record<string, unknown>;
    // A problem document or a field error in an example: an object with a string `code` beside `status`/`type` or `field`.
    if (
      typeof object.code === 'string' &&
      ('field' in object || 'status' in object || 'type' in object) &&
      /^[a-z_]+$/.test(object.code)
    )
      codes.add(object.code);
    for (const [key, value] of Object.entries(object)) walk(value, key);
  };
  walk(apiDocument, '');
  return codes;
}

/** Every field-error code the service's source writes (`{ field: ..., code: 'x', ... }`, over one line or several: up to the end of its statement). */
function codesInServer(directory = 'server'): Set<string> {
  const codes = new Set<string>();
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) {
      for (const code of codesInServer(path)) codes.add(code);
      continue;
    }
    if (!path.endsWith('.ts')) continue;
    for (const match of readFileSync(path, 'utf8').matchAll(/\bfield\b[^;]*?\bcode:\s*'([a-z_]+)'/g))
      codes.add(match[1]!);
  }
  return codes;
}

test('the scans find codes at all (so that the next test cannot pass on an empty set)', (t) => {
  t.true(codesInSpec().has('invalid_field'));
  t.true(codesInServer().has('duplicate_code'));
  t.true(codesInServer().has('duplicate_visit'));
});

test('every code in the spec and every field code the service sends is at GET /errors/{code} and in GET /errors', async (t) => {
  const list = await api().request('GET', '/errors');
  t.is(list.status, 200);
  const listed = new Set(list.body.data.map((entry: { code: string }) => entry.code));
  const missing: string[] = [];
  for (const code of [...new Set([...codesInSpec(), ...codesInServer()])].sort()) {
    const res = await api().request('GET', `/errors/${code}`);
    if (res.status !== 200 || res.body.code !== code || !listed.has(code)) missing.push(`${code} (${res.status})`);
  }
  t.deepEqual(missing, []);
});

test('a field reason is served with the status of the problem that carries it', async (t) => {
  const res = await api().request('GET', '/errors/duplicate_code');
  t.is(res.status, 200);
  t.like(res.body, { code: 'duplicate_code', status: 422, title: 'Duplicate code' });
  t.regex(res.body.description, /business_rule/);
});
