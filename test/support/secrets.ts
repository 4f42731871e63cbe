// The secrets of the test installation: every service, worker process and CLI run a test starts shares them unless the
// test sets its own, as every process of one installation must (a webhook secret sealed by a test's service is opened
// by its worker process). Explicit, so that no test writes DATA_DIR/secrets.json into the checkout's .data.
export const TEST_CURSOR_SECRET = 'the-test-installation-cursor-secret';
export const TEST_WEBHOOK_SECRET_KEY = '07'.repeat(32);
export const TEST_SECRETS = { CURSOR_SECRET: TEST_CURSOR_SECRET, WEBHOOK_SECRET_KEY: TEST_WEBHOOK_SECRET_KEY } as const;
