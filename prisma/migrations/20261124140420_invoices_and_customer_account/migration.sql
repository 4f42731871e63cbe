-- CreateTable
CREATE TABLE "invoices" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "number" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "issue_date" DATE NOT NULL,
    "due_date" DATE NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "location_id" TEXT NOT NULL,
    "trip_id" TEXT,
    "salesperson_id" TEXT,
    "subtotal" DECIMAL(18,4) NOT NULL,
    "discount" DECIMAL(18,4) NOT NULL,
    "tax" DECIMAL(18,4) NOT NULL,
    "total" DECIMAL(18,4) NOT NULL,
    "balance" DECIMAL(18,4) NOT NULL,
    "void_reason" TEXT,
    "voided_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "invoices_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "invoice_lines" (
    "organization_id" TEXT NOT NULL,
    "invoice_id" TEXT NOT NULL,
    "line_number" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "product_id" TEXT NOT NULL,
    "unit" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "unit_price" DECIMAL(18,4) NOT NULL,
    "discount" DECIMAL(18,4) NOT NULL,
    "tax_rate" DECIMAL(5,2) NOT NULL,
    "amount" DECIMAL(18,4) NOT NULL,
    "tax" DECIMAL(18,4) NOT NULL,

    CONSTRAINT "invoice_lines_pkey" PRIMARY KEY ("organization_id","invoice_id","line_number")
);

-- CreateTable
CREATE TABLE "customer_account_entries" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "document_type" TEXT NOT NULL,
    "document_id" TEXT NOT NULL,
    "line_number" INTEGER,
    "invoice_id" TEXT NOT NULL,
    "amount" DECIMAL(18,4) NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "customer_account_entries_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "customer_balances" (
    "organization_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "open_balance" DECIMAL(18,4) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "customer_balances_pkey" PRIMARY KEY ("organization_id","customer_id","currency")
);

-- CreateIndex
CREATE INDEX "invoices_organization_id_updated_at_id_idx" ON "invoices"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "invoices_organization_id_customer_id_idx" ON "invoices"("organization_id", "customer_id");

-- CreateIndex
CREATE UNIQUE INDEX "invoices_organization_id_number_key" ON "invoices"("organization_id", "number");

-- CreateIndex
CREATE INDEX "customer_account_entries_organization_id_customer_id_idx" ON "customer_account_entries"("organization_id", "customer_id");

-- CreateIndex
CREATE INDEX "customer_account_entries_organization_id_invoice_id_idx" ON "customer_account_entries"("organization_id", "invoice_id");

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_organization_id_location_id_fkey" FOREIGN KEY ("organization_id", "location_id") REFERENCES "locations"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_organization_id_trip_id_fkey" FOREIGN KEY ("organization_id", "trip_id") REFERENCES "trips"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_organization_id_salesperson_id_fkey" FOREIGN KEY ("organization_id", "salesperson_id") REFERENCES "salespeople"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_organization_id_invoice_id_fkey" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_organization_id_product_id_fkey" FOREIGN KEY ("organization_id", "product_id") REFERENCES "products"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "customer_account_entries" ADD CONSTRAINT "customer_account_entries_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "customer_account_entries" ADD CONSTRAINT "customer_account_entries_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "customer_account_entries" ADD CONSTRAINT "customer_account_entries_organization_id_invoice_id_fkey" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "customer_balances" ADD CONSTRAINT "customer_balances_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "customer_balances" ADD CONSTRAINT "customer_balances_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- The customer account is append-only like the stock ledger (refuse_ledger_change(), migration 20261124063721): a
-- void or a reversal is a new entry of the opposite sign, never an edit.
CREATE TRIGGER customer_account_entries_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON customer_account_entries
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_ledger_change();

-- What the code also checks, held by the database as well.
ALTER TABLE invoices ADD CONSTRAINT invoices_status_known CHECK (status IN ('open', 'paid', 'void'));
ALTER TABLE invoices ADD CONSTRAINT invoices_amounts_add_up CHECK (subtotal >= 0 AND discount >= 0 AND tax >= 0 AND total = subtotal - discount + tax);
ALTER TABLE invoices ADD CONSTRAINT invoices_balance_within_total CHECK (balance >= 0 AND balance <= total);
ALTER TABLE invoices ADD CONSTRAINT invoices_due_after_issue CHECK (due_date >= issue_date);
ALTER TABLE invoices ADD CONSTRAINT invoices_void_has_reason CHECK ((status = 'void') = (void_reason IS NOT NULL));
ALTER TABLE invoice_lines ADD CONSTRAINT invoice_lines_kind_known CHECK (kind IN ('sale', 'free', 'empties'));
ALTER TABLE invoice_lines ADD CONSTRAINT invoice_lines_unit_known CHECK (unit IN ('case', 'bottle', 'piece'));
ALTER TABLE invoice_lines ADD CONSTRAINT invoice_lines_quantity_positive CHECK (quantity > 0 AND line_number > 0);
ALTER TABLE invoice_lines ADD CONSTRAINT invoice_lines_amounts CHECK (unit_price >= 0 AND discount >= 0 AND amount >= 0 AND tax >= 0 AND (kind = 'sale' OR (unit_price = 0 AND amount = 0 AND tax = 0)));
ALTER TABLE customer_account_entries ADD CONSTRAINT customer_account_entries_type_known CHECK (type IN ('invoice', 'invoice_void', 'payment_allocation', 'payment_allocation_reversal', 'credit_application', 'credit_application_reversal'));
ALTER TABLE customer_account_entries ADD CONSTRAINT customer_account_entries_amount_not_zero CHECK (amount <> 0);
