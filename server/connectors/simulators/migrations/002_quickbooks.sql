-- The QuickBooks Online simulator: companies (realms), the entities they hold, and the answers given per request id.

-- A company: its book close date (writes dated on or before it fail with 6210) and its entity id counter.
CREATE TABLE simulators.qbo_realms (
  realm_id         TEXT PRIMARY KEY,
  book_close_date  DATE,
  next_id          BIGINT NOT NULL DEFAULT 100,
  created_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Every entity a company holds: Invoice, Payment, CreditMemo, RefundReceipt, Bill, JournalEntry. Voided entities keep
-- their row and number with amounts zeroed; deleted ones answer 610 Object Not Found.
CREATE TABLE simulators.qbo_entities (
  realm_id    TEXT NOT NULL REFERENCES simulators.qbo_realms (realm_id),
  id          BIGINT NOT NULL,
  entity      TEXT NOT NULL CHECK (entity IN ('Invoice', 'Payment', 'CreditMemo', 'RefundReceipt', 'Bill', 'JournalEntry')),
  sync_token  INTEGER NOT NULL DEFAULT 0,
  doc_number  TEXT,
  txn_date    DATE NOT NULL,
  status      TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'voided', 'deleted')),
  total       NUMERIC(18, 4) NOT NULL,
  balance     NUMERIC(18, 4) NOT NULL,
  body        JSONB NOT NULL,
  created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (realm_id, id)
);
CREATE INDEX qbo_entities_doc_number ON simulators.qbo_entities (realm_id, entity, doc_number);

-- The answer given to each request id, replayed when the same id comes again (written with the entity, in one
-- transaction, so a crash never books a request twice).
CREATE TABLE simulators.qbo_requests (
  realm_id     TEXT NOT NULL,
  request_id   TEXT NOT NULL,
  status_code  INTEGER NOT NULL,
  response     JSONB NOT NULL,
  created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (realm_id, request_id)
);

-- The `[sim:outage]` trigger fails the first attempt of each request id: the ids it already failed.
CREATE TABLE simulators.qbo_trigger_attempts (
  realm_id    TEXT NOT NULL,
  request_id  TEXT NOT NULL,
  PRIMARY KEY (realm_id, request_id)
);
