// Messages that name an operation must name one the spec serves (issue 38): a refusal, a DMS reason text or an
// error's description that tells a client to send `PATCH /products/{id}` sends it to a 404. Every string literal
// and template literal under server/ is read through the TypeScript parser (so comments, which may describe routes
// in their own shorthand, are not judged) and each `METHOD /path` in it is checked against the spec's operations.
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { isServed, mentionsIn } from '../support/operation-mentions.js';

const root = process.cwd();

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The text of every string and template literal of a file, a substitution written `{sub}` (one path segment). */
function literalsOf(fileName: string, source: string): Array<{ line: number; text: string }> {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const found: Array<{ line: number; text: string }> = [];
  const visit = (node: ts.Node): void => {
    let text: string | undefined;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) text = node.text;
    else if (ts.isTemplateExpression(node))
      text = node.head.text + node.templateSpans.map((span) => `{sub}${span.literal.text}`).join('');
    if (text !== undefined) found.push({ line: file.getLineAndCharacterOfPosition(node.getStart()).line + 1, text });
    else ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function unservedMentions(fileName: string, source: string): string[] {
  return literalsOf(fileName, source).flatMap(({ line, text }) => [
    ...mentionsIn(text)
      .filter(({ method, path }) => !isServed(method, path))
      .map(({ method, path }) => `${fileName}:${line}: ${method} ${path}`),
    // A method named as the way to do something, with no path ("PATCH with externalCodes"), names no operation.
    ...[...text.matchAll(/\b(GET|PUT|POST|PATCH|DELETE) with\b/g)].map(
      (match) => `${fileName}:${line}: ${match[0]} (no path)`,
    ),
  ]);
}

test('the checker finds a mention the spec does not serve, matches {params} and substitutions, and reads no comment', (t) => {
  const source = [
    '// PATCH /products/{id} in a comment is not a message',
    "const a = 'see GET /api/v1/openapi.json.';",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the sample source text holds a template literal on purpose.
    'const b = `GET /dms/${system}/files/${id}/flags?x=1.`;',
    'const c = \'or PATCH /products/prd_1 with {"tracksStock": true}\';',
    'const d = `(PATCH with "externalCodes": null)`;',
    "const e = 'PUT /routes/by-code/{system}/{code}';",
  ].join('\n');
  t.deepEqual(unservedMentions('x.ts', source), ['x.ts:4: PATCH /products/prd_1', 'x.ts:5: PATCH with (no path)']);
});

test('every METHOD /path in a string under server/ (errors, DMS reason texts, notifications, the catalogue) is an operation of the spec', (t) => {
  const files = sourceFiles(join(root, 'server'));
  t.true(files.length > 50, 'server/ is read');
  const wrong = files.flatMap((file) => unservedMentions(relative(root, file), readFileSync(file, 'utf8')));
  t.deepEqual(wrong, []);
});
