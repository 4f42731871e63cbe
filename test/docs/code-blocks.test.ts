// The rules test/docs/samples.test.ts reads the documentation by: which block runs, which is skipped and why,
// which shows a block's output, and how `...` matches. Pure: no service.
import test from 'ava';
import { codeBlocks, compareOutput, uncheckedCurls } from './code-blocks.js';

test('blocks are classified by their info string; a skip needs its reason and an output block belongs to the run block above it', (t) => {
  const blocks = codeBlocks(
    'x.md',
    [
      'Intro',
      '',
      '```sh',
      'curl -sf "$ERP_BASE_URL/health"',
      '```',
      '',
      '<!-- doc-test: output -->',
      '```text',
      '{"status":"ok",...}',
      '```',
      '',
      '<!-- doc-test: skip (needs a receiver) -->',
      '```ts',
      'listen();',
      '```',
      '```json',
      '{}',
      '```',
      '````',
      'a ``` inside',
      '````',
    ].join('\n'),
  );
  t.deepEqual(
    blocks.map((b) => [b.line, b.lang, b.kind, b.skip ?? null]),
    [
      [3, 'sh', 'shell', null],
      [8, 'text', 'other', null],
      [13, 'ts', 'ts', 'needs a receiver'],
      [16, 'json', 'other', null],
      [19, '', 'other', null],
    ],
  );
  t.deepEqual(blocks[0]!.expected, { text: '{"status":"ok",...}\n', line: 8 });
  t.is(blocks[4]!.code, 'a ``` inside\n');
});

test('a misused directive or fence is refused with its file and line', (t) => {
  const refused = (markdown: string) => t.throws(() => codeBlocks('x.md', markdown))!.message;
  t.is(
    refused('<!-- doc-test: output -->\n```text\nx\n```\n'),
    'x.md:1: an output block must follow a sh, bash or ts block that runs',
  );
  t.is(
    refused('```sh\nls\n```\n<!-- doc-test: output -->\n```text\na\n```\n<!-- doc-test: output -->\n```text\nb\n```\n'),
    'x.md:8: x.md:1 already has its output block',
  );
  t.is(
    refused('<!-- doc-test: skip (x) -->\n```sh\nls\n```\n<!-- doc-test: output -->\n```text\na\n```\n'),
    'x.md:5: an output block must follow a sh, bash or ts block that runs',
  );
  t.is(
    refused('<!-- doc-test: skip -->\n```sh\nls\n```\n'),
    'x.md:1: unknown doc-test directive "skip" (skip (reason) or output)',
  );
  t.is(
    refused('<!-- doc-test: skip (x) -->\nsome text\n```sh\nls\n```\n'),
    'x.md:1: the doc-test directive must come right before a fenced block',
  );
  t.is(
    refused('<!-- doc-test: skip (x) -->\n```text\nls\n```\n'),
    'x.md:1: only a sh, bash or ts block can be skipped (this one is ```text, which never runs)',
  );
  t.is(
    refused('<!-- doc-test: skip (x)\n-->\n```sh\nls\n```\n'),
    'x.md:1: a doc-test directive is one line: <!-- doc-test: skip (reason) --> or <!-- doc-test: output -->',
  );
  t.is(
    refused('```shell\nls\n```\n'),
    'x.md:1: write ```sh, ```bash or ```ts for a sample that runs (or ```text), not ```shell',
  );
  t.is(refused('```sh\nls\n'), 'x.md:1: the block is never closed');
});

test('output: `...` stands for any text within a line, a line of only `...` for any lines; anything else must match exactly', (t) => {
  t.is(
    compareOutput(
      'HTTP/1.1 200 OK\n...\n{"status":"ok","version":"..."}\n',
      'HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n\r\n{"status":"ok","version":"1.13.0"}',
    ),
    null,
  );
  t.is(compareOutput('a\n...\n', 'a\n'), null, 'a line of ... may stand for no line');
  t.is(compareOutput('cus_... UG0000002\n', 'cus_01M UG0000002\n'), null);
  t.is(
    compareOutput('cus_... UG0000002\n', 'cus_01M UG0000003\n'),
    'expected output line 1 `cus_... UG0000002` is not printed (printed line 1 is `cus_01M UG0000003`)',
  );
  t.is(compareOutput('a\n', 'a\nb\n'), 'more was printed than the text shows, from line 2: `b`');
  t.is(
    compareOutput('a\nc\n...\n', 'a\nb\nc\n'),
    'expected output line 2 `c` is not printed (printed line 2 is `b`)',
    'lines follow each other unless a ... line is between',
  );
  t.is(compareOutput('a\n...\nd\n', 'a\nb\nc\n'), 'expected output line 3 `d` is not printed (after printed line 1)');
  t.is(compareOutput('a\nb\n', 'a\n'), 'expected output line 2 `b` is not printed (nothing more was printed)');
  t.is(
    compareOutput('1.13.0\n', '1x13x0\n'),
    'expected output line 1 `1.13.0` is not printed (printed line 1 is `1x13x0`)',
    'a dot is a dot',
  );
});

test('a curl that neither fails on an HTTP error nor has its answer shown is reported', (t) => {
  const [block] = codeBlocks(
    'x.md',
    '```sh\ncurl -s "$ERP_BASE_URL/customers" | head\ncurl -sf a && curl --fail-with-body b \\\n  -d x\nID=$(curl -fsS c)\ncurl --fail d # checked\n```\n',
  );
  t.deepEqual(uncheckedCurls(block!), ['curl -s "$ERP_BASE_URL/customers"']);
  const [shown] = codeBlocks(
    'x.md',
    '```sh\ncurl -s -w "%{http_code}" a\n```\n<!-- doc-test: output -->\n```text\n401\n```\n',
  );
  t.deepEqual(uncheckedCurls(shown!), [], 'its status is in the output the text shows');
});
