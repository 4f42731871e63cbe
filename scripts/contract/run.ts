// `npm run contract`: the binary of the contract check (scripts/contract/command.ts says what it does), on this
// process's own streams and exit code.
import { runContractCommand } from './command.js';

process.exitCode = await runContractCommand(process.argv, {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
