-- The EFRIS simulator: fiscalised documents (invoices and approved credit notes) and credit note applications.

-- A counter per simulator for fiscal document numbers (FDNs).
CREATE TABLE simulators.efris_counters (
  name   TEXT PRIMARY KEY,
  value  BIGINT NOT NULL
);
INSERT INTO simulators.efris_counters (name, value) VALUES ('fdn', 322000150000);

-- Fiscalised documents of each taxpayer (TIN): invoices (T109) and credit notes once approved. `lines` keeps, per
-- goods line, what is still creditable (remaining quantity and amount).
CREATE TABLE simulators.efris_documents (
  tin              TEXT NOT NULL,
  invoice_id       TEXT NOT NULL,
  fdn              TEXT NOT NULL UNIQUE,
  antifake_code    TEXT NOT NULL,
  kind             TEXT NOT NULL CHECK (kind IN ('invoice', 'credit_note')),
  reference_no     TEXT NOT NULL,
  currency         TEXT NOT NULL,
  buyer_name       TEXT NOT NULL,
  gross_amount     NUMERIC(18, 4) NOT NULL,
  tax_amount       NUMERIC(18, 4) NOT NULL,
  lines            JSONB NOT NULL,
  original_fdn     TEXT,
  is_refund        INTEGER NOT NULL DEFAULT 0,
  issued_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (tin, invoice_id)
);
-- The seller's reference number is unique per taxpayer among invoices (2253 on a repeat).
CREATE UNIQUE INDEX efris_documents_reference ON simulators.efris_documents (tin, reference_no) WHERE kind = 'invoice';

-- Credit note applications (T110): 102 submitted, then 101 approved (the credit note is fiscalised), 103 rejected or
-- 104 voided (T120).
CREATE TABLE simulators.efris_applications (
  tin                 TEXT NOT NULL,
  reference_no        TEXT NOT NULL,
  seller_reference    TEXT NOT NULL,
  ori_invoice_id      TEXT NOT NULL,
  ori_fdn             TEXT NOT NULL,
  reason_code         TEXT NOT NULL,
  currency            TEXT NOT NULL,
  lines               JSONB NOT NULL,
  gross_amount        NUMERIC(18, 4) NOT NULL,
  tax_amount          NUMERIC(18, 4) NOT NULL,
  approve_status      TEXT NOT NULL CHECK (approve_status IN ('101', '102', '103', '104')),
  credit_fdn          TEXT,
  remark              TEXT,
  submitted_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (tin, reference_no),
  UNIQUE (tin, seller_reference)
);

-- The `[sim:outage]` trigger fails the first attempt of each reference number: the ones it already failed.
CREATE TABLE simulators.efris_trigger_attempts (
  tin           TEXT NOT NULL,
  reference_no  TEXT NOT NULL,
  PRIMARY KEY (tin, reference_no)
);
