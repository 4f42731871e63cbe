import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

test('the spec lints clean with the checked-in Redocly ruleset', async (t) => {
  const run = promisify(execFile);
  const { stdout, stderr } = await run('node_modules/.bin/redocly', [
    'lint',
    'spec/openapi.yaml',
    '--config',
    'redocly.yaml',
    '--format',
    'stylish',
  ]).catch((error: { stdout: string; stderr: string }) => {
    t.fail(`redocly lint failed:\n${error.stdout}\n${error.stderr}`);
    return error;
  });
  t.notRegex(stdout + stderr, /\b(error|warning)\b.*\(/i, 'no errors or warnings');
});
