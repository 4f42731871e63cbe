-- The simulators' own schema: their state is not the service's, as a real QuickBooks company or EFRIS taxpayer
-- account is not. Each simulator adds its tables in a later file of this folder.

-- Failures on demand (the operator CLI's `admin connector fail`): the next `remaining` requests of one account of
-- one system fail in `mode` (null remaining: until cleared). `delay_ms` is the slow mode's wait.
CREATE TABLE simulators.failure_injections (
  id          BIGSERIAL PRIMARY KEY,
  system      TEXT NOT NULL CHECK (system IN ('accounting', 'fiscal')),
  account     TEXT NOT NULL,
  mode        TEXT NOT NULL CHECK (mode ~ '^[a-z_]{1,32}$'),
  remaining   INTEGER CHECK (remaining IS NULL OR remaining >= 0),
  delay_ms    INTEGER NOT NULL DEFAULT 0 CHECK (delay_ms >= 0 AND delay_ms <= 120000),
  created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX failure_injections_account ON simulators.failure_injections (system, account, id);
