-- CreateTable
CREATE TABLE "address_rate_buckets" (
    "address" TEXT NOT NULL,
    "tokens" DOUBLE PRECISION NOT NULL,
    "refilled_at" TIMESTAMPTZ(6) NOT NULL,
    "last_granted" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "address_rate_buckets_pkey" PRIMARY KEY ("address")
);

-- CreateIndex
CREATE INDEX "address_rate_buckets_refilled_at_idx" ON "address_rate_buckets"("refilled_at");
