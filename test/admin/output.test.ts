// The operator CLI's shared output (scripts/admin/output.ts): CSV as RFC 4180 writes it, and the three forms of a
// list agreeing on its rows.
import test from 'ava';
import { csv, csvField, printList } from '../../scripts/admin/output.js';
import { withIo } from '../../scripts/admin/io.js';

test('a CSV field is quoted exactly when it holds a comma, a double quote, CR or LF, or begins or ends with a space; quotes inside are doubled', (t) => {
  t.is(csvField('plain'), 'plain');
  t.is(csvField(''), '');
  t.is(csvField('a,b'), '"a,b"');
  t.is(csvField('say "hi"'), '"say ""hi"""');
  t.is(csvField('two\nlines'), '"two\nlines"');
  t.is(csvField('cr\r'), '"cr\r"');
  t.is(csvField(' padded '), '" padded "');
  t.is(csvField('ünïcode – ok'), 'ünïcode – ok');
});

test('a CSV document is a header record and one record per row, each ended by CRLF', (t) => {
  t.is(
    csv(
      ['A', 'B'],
      [
        ['1', 'x,y'],
        ['2', ''],
      ],
    ),
    'A,B\r\n1,"x,y"\r\n2,\r\n',
  );
  t.is(csv(['ONLY'], []), 'ONLY\r\n');
});

async function printed(
  format: { json?: boolean; csv?: boolean },
  rows: { id: string; n: number | null; ok: boolean }[],
): Promise<string> {
  let out = '';
  await withIo(
    {
      stdout: (text) => {
        out += text;
      },
      stderr: () => {},
      env: {},
      exitCode: 0,
    },
    async () => {
      printList(
        format,
        rows,
        [
          { header: 'ID', value: (r) => r.id },
          { header: 'N', value: (r) => r.n },
          { header: 'OK', value: (r) => r.ok },
        ],
        { empty: 'Nothing.', json: (all) => ({ rows: all }) },
      );
    },
  );
  return out;
}

test('printList: a table with a header row, the same rows as CSV, the JSON document; the empty message only in the table form', async (t) => {
  const rows = [
    { id: 'a', n: 1, ok: true },
    { id: 'b,c', n: null, ok: false },
  ];
  t.is(await printed({}, rows), 'ID   N  OK\na    1  yes\nb,c     no\n');
  t.is(await printed({ csv: true }, rows), 'ID,N,OK\r\na,1,yes\r\n"b,c",,no\r\n');
  t.deepEqual(JSON.parse(await printed({ json: true }, rows)), { rows });
  t.is(await printed({}, []), 'Nothing.\n');
  t.is(await printed({ csv: true }, []), 'ID,N,OK\r\n');
  t.deepEqual(JSON.parse(await printed({ json: true }, [])), { rows: [] });
});
