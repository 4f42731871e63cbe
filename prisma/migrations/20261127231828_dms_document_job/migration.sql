-- A DMS document is sent once while it waits in the queue: job_id names the dms.process job it is queued in, until
-- that job claims it; claimed_by names the worker process whose job is posting it, so that a dead worker's documents
-- are due again within its heartbeat lease (server/modules/dms/dispatch.ts). Both null for the documents of before.
-- AlterTable
ALTER TABLE "dms_documents" ADD COLUMN     "claimed_by" TEXT,
ADD COLUMN     "job_id" UUID;

-- CreateIndex
CREATE INDEX "dms_documents_claimed_by_idx" ON "dms_documents"("claimed_by");
