-- CreateTable
CREATE TABLE "dms_actions" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "connection_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "subject_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "detail" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dms_actions_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateIndex
CREATE INDEX "dms_actions_organization_id_updated_at_idx" ON "dms_actions"("organization_id", "updated_at");

-- CreateIndex
CREATE UNIQUE INDEX "dms_actions_organization_id_kind_subject_id_key" ON "dms_actions"("organization_id", "kind", "subject_id");

-- AddForeignKey
ALTER TABLE "dms_actions" ADD CONSTRAINT "dms_actions_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "dms_actions" ADD CONSTRAINT "dms_actions_organization_id_connection_id_fkey" FOREIGN KEY ("organization_id", "connection_id") REFERENCES "dms_connections"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- Each kind with its own statuses.
ALTER TABLE "dms_actions" ADD CONSTRAINT "dms_actions_status_check" CHECK (
  ("kind" = 'flag_file' AND "status" IN ('pending', 'written'))
  OR ("kind" = 'callback' AND "status" IN ('retrying', 'delivered', 'failed'))
  OR ("kind" = 'reprocess' AND "status" = 'done'));
