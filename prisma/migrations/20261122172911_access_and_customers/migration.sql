-- CreateTable
CREATE TABLE "api_keys" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "environment" TEXT NOT NULL,
    "secret_hash" CHAR(64) NOT NULL,
    "scopes" TEXT[],
    "rate_limits" JSONB NOT NULL,
    "ip_allowlist" TEXT[],
    "expires_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "rotated_from_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "rate_limit_buckets" (
    "organization_id" TEXT NOT NULL,
    "api_key_id" TEXT NOT NULL,
    "class" TEXT NOT NULL,
    "tokens" DOUBLE PRECISION NOT NULL,
    "refilled_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "rate_limit_buckets_pkey" PRIMARY KEY ("organization_id","api_key_id","class")
);

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "organization_id" TEXT NOT NULL,
    "api_key_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "request_hash" CHAR(64) NOT NULL,
    "response_status" INTEGER NOT NULL,
    "response_body" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("organization_id","api_key_id","key")
);

-- CreateTable
CREATE TABLE "api_log" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "time" TIMESTAMPTZ(3) NOT NULL,
    "key_prefix" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "duration_ms" DOUBLE PRECISION NOT NULL,
    "request_id" TEXT NOT NULL,
    "idempotency_key" TEXT,
    "request_body" TEXT,
    "response_body" TEXT,

    CONSTRAINT "api_log_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "code_systems" (
    "organization_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "code_systems_pkey" PRIMARY KEY ("organization_id","name")
);

-- CreateTable
CREATE TABLE "external_codes" (
    "organization_id" TEXT NOT NULL,
    "resource" TEXT NOT NULL,
    "code_system" TEXT NOT NULL,
    "code" TEXT NOT NULL,
    "record_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "external_codes_pkey" PRIMARY KEY ("organization_id","resource","code_system","code")
);

-- CreateTable
CREATE TABLE "events" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "resource" TEXT NOT NULL,
    "record_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "events_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "customers" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "outlet_code" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "price_group" TEXT,
    "route_id" TEXT,
    "credit_limit_amount" DECIMAL(18,4),
    "credit_limit_currency" CHAR(3),
    "payment_terms_days" INTEGER NOT NULL DEFAULT 0,
    "address" JSONB,
    "region" TEXT,
    "phone" TEXT,
    "tax_id" TEXT,
    "gps_latitude" DECIMAL(9,6),
    "gps_longitude" DECIMAL(9,6),
    "contact" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "customers_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_prefix_key" ON "api_keys"("prefix");

-- CreateIndex
CREATE INDEX "idempotency_keys_created_at_idx" ON "idempotency_keys"("created_at");

-- CreateIndex
CREATE INDEX "api_log_organization_id_time_idx" ON "api_log"("organization_id", "time" DESC);

-- CreateIndex
CREATE INDEX "api_log_organization_id_request_id_idx" ON "api_log"("organization_id", "request_id");

-- CreateIndex
CREATE UNIQUE INDEX "external_codes_organization_id_resource_record_id_code_syst_key" ON "external_codes"("organization_id", "resource", "record_id", "code_system");

-- CreateIndex
CREATE INDEX "events_created_at_id_idx" ON "events"("created_at", "id");

-- CreateIndex
CREATE INDEX "customers_organization_id_updated_at_id_idx" ON "customers"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "customers_organization_id_outlet_code_key" ON "customers"("organization_id", "outlet_code");
