-- CreateTable
CREATE TABLE "webhook_send_slots" (
    "organization_id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "slot" SMALLINT NOT NULL,
    "process_id" TEXT NOT NULL,
    "job_id" UUID NOT NULL,
    "job_retry_count" INTEGER NOT NULL,
    "delivery_id" TEXT NOT NULL,
    "claimed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_send_slots_pkey" PRIMARY KEY ("organization_id","endpoint_id","slot")
);

-- CreateTable
CREATE TABLE "service_processes" (
    "id" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "heartbeat_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "stopped_at" TIMESTAMPTZ(3),

    CONSTRAINT "service_processes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "webhook_send_slots_process_id_idx" ON "webhook_send_slots"("process_id");

-- CreateIndex
CREATE INDEX "service_processes_heartbeat_at_idx" ON "service_processes"("heartbeat_at");

-- AddForeignKey
ALTER TABLE "webhook_send_slots" ADD CONSTRAINT "webhook_send_slots_organization_id_endpoint_id_fkey" FOREIGN KEY ("organization_id", "endpoint_id") REFERENCES "webhook_endpoints"("organization_id", "id") ON DELETE CASCADE ON UPDATE RESTRICT;

-- A slot is 0 to the largest per-endpoint limit the service allows (64); the role is one of the service's.
ALTER TABLE webhook_send_slots ADD CONSTRAINT webhook_send_slots_slot_range CHECK (slot >= 0 AND slot < 64 AND job_retry_count >= 0);
ALTER TABLE service_processes ADD CONSTRAINT service_processes_role_known CHECK (role IN ('all', 'api', 'worker'));
