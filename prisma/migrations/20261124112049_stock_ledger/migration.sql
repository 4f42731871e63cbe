-- CreateTable
CREATE TABLE "stock_documents" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "number" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "reason_code" TEXT,
    "note" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stock_documents_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "stock_movements" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "document_type" TEXT NOT NULL,
    "document_id" TEXT NOT NULL,
    "line_number" INTEGER NOT NULL,
    "product_id" TEXT NOT NULL,
    "from_location_id" TEXT,
    "to_location_id" TEXT,
    "quantity" INTEGER NOT NULL,
    "unit_cost" DECIMAL(20,6) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stock_movements_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "stock_levels" (
    "organization_id" TEXT NOT NULL,
    "location_id" TEXT NOT NULL,
    "product_id" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stock_levels_pkey" PRIMARY KEY ("organization_id","location_id","product_id")
);

-- CreateTable
CREATE TABLE "stock_valuations" (
    "organization_id" TEXT NOT NULL,
    "product_id" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "average_cost" DECIMAL(20,6) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stock_valuations_pkey" PRIMARY KEY ("organization_id","product_id")
);

-- CreateIndex
CREATE INDEX "stock_documents_organization_id_updated_at_id_idx" ON "stock_documents"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "stock_documents_organization_id_number_key" ON "stock_documents"("organization_id", "number");

-- CreateIndex
CREATE INDEX "stock_movements_organization_id_updated_at_id_idx" ON "stock_movements"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "stock_movements_organization_id_document_type_document_id_idx" ON "stock_movements"("organization_id", "document_type", "document_id");

-- CreateIndex
CREATE INDEX "stock_levels_organization_id_updated_at_location_id_product_idx" ON "stock_levels"("organization_id", "updated_at", "location_id", "product_id");

-- AddForeignKey
ALTER TABLE "stock_documents" ADD CONSTRAINT "stock_documents_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "stock_movements" ADD CONSTRAINT "stock_movements_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "stock_movements" ADD CONSTRAINT "stock_movements_organization_id_product_id_fkey" FOREIGN KEY ("organization_id", "product_id") REFERENCES "products"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "stock_movements" ADD CONSTRAINT "stock_movements_organization_id_from_location_id_fkey" FOREIGN KEY ("organization_id", "from_location_id") REFERENCES "locations"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "stock_movements" ADD CONSTRAINT "stock_movements_organization_id_to_location_id_fkey" FOREIGN KEY ("organization_id", "to_location_id") REFERENCES "locations"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "stock_levels" ADD CONSTRAINT "stock_levels_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "stock_levels" ADD CONSTRAINT "stock_levels_organization_id_location_id_fkey" FOREIGN KEY ("organization_id", "location_id") REFERENCES "locations"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "stock_levels" ADD CONSTRAINT "stock_levels_organization_id_product_id_fkey" FOREIGN KEY ("organization_id", "product_id") REFERENCES "products"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "stock_valuations" ADD CONSTRAINT "stock_valuations_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "stock_valuations" ADD CONSTRAINT "stock_valuations_organization_id_product_id_fkey" FOREIGN KEY ("organization_id", "product_id") REFERENCES "products"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- The stock ledger is append-only (refuse_ledger_change(), migration 20261124063721): a correction is a reversing
-- movement of another document, never an edit.
CREATE TRIGGER stock_movements_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON stock_movements
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_ledger_change();

-- What the ledger code also checks, held by the database as well.
ALTER TABLE stock_movements ADD CONSTRAINT stock_movements_quantity_positive CHECK (quantity > 0);
ALTER TABLE stock_movements ADD CONSTRAINT stock_movements_has_a_side CHECK (from_location_id IS NOT NULL OR to_location_id IS NOT NULL);
ALTER TABLE stock_movements ADD CONSTRAINT stock_movements_two_sides_differ CHECK (from_location_id IS DISTINCT FROM to_location_id);
ALTER TABLE stock_levels ADD CONSTRAINT stock_levels_not_negative CHECK (quantity >= 0);
ALTER TABLE stock_valuations ADD CONSTRAINT stock_valuations_not_negative CHECK (quantity >= 0 AND average_cost >= 0);
