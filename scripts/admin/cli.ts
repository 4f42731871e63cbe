// Entry of the operator CLI: `npm run --silent admin -- <command>` (compiled to dist/admin-cli.mjs). The commands
// run through runCli (run.ts) over this process's stdout, stderr and environment. With --json (or --csv), stdout
// holds only that document.
import { readEnvFile } from '../../server/platform/config.js';
import { runCli } from './run.js';

let code: number;
try {
  readEnvFile(); // the same optional .env that `npm start` reads, so both see one WEBHOOK_ALLOW_LOOPBACK, DATA_DIR, ...
  code = (
    await runCli(process.argv.slice(2), {
      stdout: (text) => {
        process.stdout.write(text);
      },
      stderr: (text) => {
        process.stderr.write(text);
      },
      env: process.env,
      stdin: process.stdin,
    })
  ).code;
} catch (error) {
  process.stderr.write(`error: ${(error as Error).message}\n`); // a .env that cannot be read
  code = 1;
}
process.exitCode = code;
