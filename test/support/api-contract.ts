// The description's response contract for the tests' clients. Under `npm test` its validators are the ones the run
// compiled once (TEST_RESPONSE_VALIDATORS, written by scripts/test.ts from the same generated/openapi.json); run any
// other way, each is compiled on its first use.
import { loadPrecompiledValidators } from '../../scripts/contract/precompiled-validators.js';
import { responseContract } from '../../scripts/contract/response-contract.js';
import { apiDocument } from '../../server/platform/spec.js';

const precompiled = process.env.TEST_RESPONSE_VALIDATORS;

export const apiContract = responseContract(
  apiDocument as never,
  precompiled ? loadPrecompiledValidators(precompiled) : undefined,
);
