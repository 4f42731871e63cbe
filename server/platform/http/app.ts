// The HTTP pipeline (see ARCHITECTURE.md, The flow of a request):
// request id -> known operation -> API log -> key in query? -> key, allowlist, rate limit, scope -> body (JSON or
// file) -> validator (spec) -> module routes -> problem documents for every error. The body is read only once the
// caller is known: a request without a valid key is answered 401 having read none of it (see body-refused.ts).
import express, { type Router } from 'express';
import type { Db } from '../database/transaction.js';
import type { Logger } from 'pino';
import { addressBudget } from '../access/address-budget.js';
import { authenticate, refuseKeyInQuery, type KeyFacts } from '../access/authenticate.js';
import type { KeyCache } from '../access/key-cache.js';
import type { RateBudget, RateLimit } from '../access/rate-limit.js';
import type { Environment } from '../config.js';
import { operationIndex } from '../operations.js';
import { API_BASE_PATH, type ApiDocument } from '../spec.js';
import { apiLogMiddleware, type ApiLogWriter } from './api-log.js';
import { errorHandler } from './error-handler.js';
import { fileBody } from './file-body.js';
import { inSequence } from './in-sequence.js';
import { unvalidatedParameters } from './unvalidated-parameters.js';
import { jsonBody } from './json-body.js';
import { knownOperation } from './known-operation.js';
import { notFound } from './not-found.js';
import { openApiValidator } from './openapi-validator.js';
import { requestId } from './request-id.js';
import { rootLinks } from './root-links.js';
import { requiredBody } from './required-body.js';
import { apiRouter } from './router.js';
import { refuseNulCharacters } from './refuse-nul.js';
import { strictParameters } from './strict-parameters.js';

export interface AppOptions {
  logger: Logger;
  validateResponses: boolean;
  document: ApiDocument;
  /** For key reads and rate-limit buckets: see Database.relaxed. */
  relaxed: Db;
  /** The keys this process has authenticated, kept while it hears of their changes. */
  keys: KeyCache<KeyFacts>;
  /** This process's side of the keys' shared rate-limit budgets. */
  budget: RateBudget;
  /** The budget per client address of the operations without a key and of failed authentications. */
  anonymousRateLimit: RateLimit;
  environment: Environment;
  apiLog: ApiLogWriter;
  /** Express's `trust proxy`: which proxies' X-Forwarded-For to believe for the caller's address. */
  trustProxy: string | false;
  /** Module routers, mounted under /api/v1 after validation. */
  routers: Router[];
}

export function createApp(options: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  app.set('case sensitive routing', true); // the validator reads it; see router.ts
  app.set('trust proxy', options.trustProxy);

  // The fixed steps run as one sequence, not as a router layer each: the router's cost per layer is paid on every
  // request (decision 0056; in-sequence.ts).
  app.use(
    inSequence(
      requestId,
      // The operation is found before the API log is hooked, so that a call without a key (an operation that takes
      // none, which no organisation's log keeps) costs the log nothing; an unknown path never had a caller to log
      // either.
      knownOperation(operationIndex(options.document)),
      apiLogMiddleware(options.apiLog, options.environment, options.document),
    ),
  );

  const api = apiRouter();
  api.use(
    inSequence(
      refuseKeyInQuery,
      addressBudget({ buckets: options.relaxed, limit: options.anonymousRateLimit }),
      authenticate({
        buckets: options.relaxed,
        keys: options.keys,
        budget: options.budget,
        environment: options.environment,
        document: options.document,
      }),
      unvalidatedParameters,
      jsonBody(),
      fileBody(),
      openApiValidator({ document: options.document, validateResponses: options.validateResponses }),
      requiredBody,
      strictParameters,
      refuseNulCharacters,
    ),
  );
  for (const router of options.routers) api.use(router);
  app.use(API_BASE_PATH, api);
  // People type /docs at the root; the reference lives under the API base like every other path. 308 keeps the method.
  app.get('/docs', (_req, res) => res.redirect(308, `${API_BASE_PATH}/docs`));
  app.get('/', rootLinks); // links to /docs, /openapi.json, /health; not in the spec (see root-links.ts)

  app.use(notFound);
  app.use(errorHandler(options.logger, options.document));
  return app;
}
