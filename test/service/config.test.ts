import test from 'ava';
import { ConfigError, loadConfig } from '../../server/platform/config.js';

test('with no variables set the service runs as a sandbox on port 3000 with the embedded PostgreSQL', (t) => {
  const config = loadConfig({});
  t.like(config, {
    environment: 'sandbox',
    port: 3000,
    host: '127.0.0.1',
    databaseUrl: null,
    dataDir: '.data',
    logLevel: 'info',
    validateResponses: true,
  });
});

test('every bad value is reported at once, each naming its variable and what it accepts', (t) => {
  const error = t.throws(
    () =>
      loadConfig({
        PORT: 'eighty',
        ENVIRONMENT: 'staging',
        LOG_LEVEL: 'loud',
        DATABASE_URL: 'mysql://x',
        VALIDATE_RESPONSES: 'yes',
      }),
    { instanceOf: ConfigError },
  ) as ConfigError;
  t.is(error.problems.length, 5);
  t.regex(error.message, /PORT="eighty" is invalid; expected a port number/);
  t.regex(error.message, /ENVIRONMENT="staging" is invalid; expected sandbox or production/);
  t.regex(error.message, /LOG_LEVEL="loud" is invalid; expected fatal, error/);
  t.regex(error.message, /DATABASE_URL="mysql:\/\/x" is invalid; expected a postgres:\/\//);
  t.regex(error.message, /VALIDATE_RESPONSES="yes" is invalid; expected true or false/);
});

test('production refuses to start without DATABASE_URL: the embedded PostgreSQL is for development and the sandbox', (t) => {
  const error = t.throws(() => loadConfig({ ENVIRONMENT: 'production' }), { instanceOf: ConfigError });
  t.regex(error!.message, /DATABASE_URL is required when ENVIRONMENT=production/);
  t.is(
    loadConfig({
      ENVIRONMENT: 'production',
      DATABASE_URL: 'postgresql://db/erp',
      CURSOR_SECRET: 'x'.repeat(16),
      WEBHOOK_SECRET_KEY: 'a'.repeat(64),
      PUBLIC_BASE_URL: 'https://erp.example.com',
    }).environment,
    'production',
  );
});

test('production refuses to start without its own CURSOR_SECRET and WEBHOOK_SECRET_KEY, or with the sandbox bootstrap on', (t) => {
  const base = {
    ENVIRONMENT: 'production',
    DATABASE_URL: 'postgresql://db/erp',
    PUBLIC_BASE_URL: 'https://erp.example.com',
  };
  const secrets = { CURSOR_SECRET: 'x'.repeat(16), WEBHOOK_SECRET_KEY: 'a'.repeat(64) };
  t.regex(t.throws(() => loadConfig(base))!.message, /CURSOR_SECRET is required when ENVIRONMENT=production/);
  t.regex(t.throws(() => loadConfig(base))!.message, /WEBHOOK_SECRET_KEY is required when ENVIRONMENT=production/);
  t.regex(
    t.throws(() => loadConfig({ ...base, ...secrets, SANDBOX_BOOTSTRAP: 'true' }))!.message,
    /SANDBOX_BOOTSTRAP cannot be true/,
  );
  t.false(loadConfig({ ...base, ...secrets }).sandboxBootstrap);
  t.true(loadConfig({}).sandboxBootstrap);
});

test('response validation is on by default and off by default under NODE_ENV=production', (t) => {
  t.true(loadConfig({}).validateResponses);
  t.false(loadConfig({ NODE_ENV: 'production' }).validateResponses);
  t.true(loadConfig({ NODE_ENV: 'production', VALIDATE_RESPONSES: 'true' }).validateResponses);
});

test('PUBLIC_BASE_URL: required in production (refused naming it), an http(s) URL without credentials, query or fragment, kept without its trailing slash', (t) => {
  const production = {
    ENVIRONMENT: 'production',
    DATABASE_URL: 'postgresql://db/erp',
    CURSOR_SECRET: 'x'.repeat(16),
    WEBHOOK_SECRET_KEY: 'a'.repeat(64),
  };
  const error = t.throws(() => loadConfig(production), { instanceOf: ConfigError }) as ConfigError;
  t.deepEqual(
    error.problems.map((p) => p.split(' ')[0]),
    ['PUBLIC_BASE_URL'],
  );
  t.regex(error.message, /PUBLIC_BASE_URL is required when ENVIRONMENT=production/);
  t.is(
    loadConfig({ ...production, PUBLIC_BASE_URL: 'https://erp.example.com/' }).publicBaseUrl,
    'https://erp.example.com',
  );
  t.is(
    loadConfig({ PUBLIC_BASE_URL: 'https://erp.example.com/distributor/' }).publicBaseUrl,
    'https://erp.example.com/distributor',
  );
  t.is(loadConfig({}).publicBaseUrl, null, 'the sandbox uses its listen address');
  for (const bad of [
    'erp.example.com',
    'ftp://erp.example.com',
    'https://user:pw@erp.example.com',
    'https://erp.example.com/?a=1',
    'https://erp.example.com/#x',
  ]) {
    t.regex(
      t.throws(() => loadConfig({ PUBLIC_BASE_URL: bad }))!.message,
      /PUBLIC_BASE_URL=".*" is invalid; expected an http\(s\) URL/,
      bad,
    );
  }
});
