// Every setting in one README table with its default (issue 19, part 8). The settings are the variables
// loadConfig reads, observed through the environment it is given, so a setting added to config.ts without a row
// fails here. Before, the webhook settings had their own table under Webhooks and none mentioned .env.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../server/platform/config.js';

function settingsRead(): string[] {
  const read = new Set<string>();
  loadConfig(
    new Proxy(
      {},
      {
        get: (_target, name) => {
          if (typeof name === 'string') read.add(name);
          return undefined;
        },
      },
    ),
  );
  return [...read];
}

const readme = readFileSync('README.md', 'utf8');
const section = (title: string) => readme.split(/^## /m).find((s) => s.startsWith(`${title}\n`)) ?? '';
const tableRows = (text: string) => text.split('\n').filter((line) => /^\| `[A-Z][A-Z0-9_]*` \|/.test(line));

test('the Configuration section of the README has one row per setting, each with a default, and says where .env is read', (t) => {
  const names = settingsRead().filter((name) => name !== 'NODE_ENV'); // NODE_ENV is node's, named in VALIDATE_RESPONSES's default
  t.true(names.length >= 15, names.join(', '));
  const configuration = section('Configuration');
  const rows = new Map(
    tableRows(configuration).map((line) => [line.split('`')[1]!, line.split('|').map((cell) => cell.trim())]),
  );
  for (const name of names) {
    const row = rows.get(name);
    t.truthy(row, `${name} has a row in the Configuration table`);
    t.true((row?.[2] ?? '').length > 0, `${name} has a default`);
  }
  t.regex(configuration, /`\.env`/);
});

test('no other section of the README has its own table of settings', (t) => {
  const elsewhere = readme
    .split(/^## /m)
    .filter((s) => !s.startsWith('Configuration\n'))
    .flatMap(tableRows);
  const settings = new Set(settingsRead());
  t.deepEqual(
    elsewhere.filter((line) => settings.has(line.split('`')[1]!)),
    [],
  );
});
