-- AlterTable
ALTER TABLE "customer_account_entries" ALTER COLUMN "invoice_id" DROP NOT NULL;

-- CreateTable
CREATE TABLE "payments" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "number" TEXT NOT NULL,
    "receipt_group_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "invoice_id" TEXT,
    "amount" DECIMAL(18,4) NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "payment_date" DATE NOT NULL,
    "reference" TEXT,
    "trip_id" TEXT,
    "salesperson_id" TEXT,
    "reversal_reason" TEXT,
    "reversed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payments_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "credit_notes" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "number" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "invoice_id" TEXT,
    "return_id" TEXT,
    "trip_id" TEXT,
    "issue_date" DATE NOT NULL,
    "reason" TEXT,
    "notes" TEXT,
    "subtotal" DECIMAL(18,4) NOT NULL,
    "discount" DECIMAL(18,4) NOT NULL,
    "tax" DECIMAL(18,4) NOT NULL,
    "total" DECIMAL(18,4) NOT NULL,
    "remaining_amount" DECIMAL(18,4) NOT NULL,
    "cash_refund_amount" DECIMAL(18,4),
    "currency" CHAR(3) NOT NULL,
    "fiscal_status" TEXT,
    "fiscal_fdn" TEXT,
    "fiscal_verification_code" TEXT,
    "fiscal_qr_code" TEXT,
    "fiscalised_at" TIMESTAMPTZ(3),
    "posting_status" TEXT NOT NULL DEFAULT 'pending',
    "accounting_ref" TEXT,
    "accounting_type" TEXT,
    "posting_reason" TEXT,
    "cancel_reason" TEXT,
    "cancelled_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "credit_notes_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "credit_note_lines" (
    "organization_id" TEXT NOT NULL,
    "credit_note_id" TEXT NOT NULL,
    "line_number" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "product_id" TEXT,
    "description" TEXT NOT NULL,
    "quantity" DECIMAL(18,4) NOT NULL,
    "unit_price" DECIMAL(18,4) NOT NULL,
    "discount" DECIMAL(18,4) NOT NULL,
    "tax_rate" DECIMAL(5,2) NOT NULL,
    "amount" DECIMAL(18,4) NOT NULL,
    "tax" DECIMAL(18,4) NOT NULL,

    CONSTRAINT "credit_note_lines_pkey" PRIMARY KEY ("organization_id","credit_note_id","line_number")
);

-- CreateTable
CREATE TABLE "returns" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "number" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "invoice_id" TEXT NOT NULL,
    "location_id" TEXT NOT NULL,
    "bad_stock_location_id" TEXT,
    "trip_id" TEXT,
    "return_date" DATE NOT NULL,
    "reason" TEXT,
    "currency" CHAR(3) NOT NULL,
    "subtotal" DECIMAL(18,4) NOT NULL,
    "discount" DECIMAL(18,4) NOT NULL,
    "tax" DECIMAL(18,4) NOT NULL,
    "total" DECIMAL(18,4) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "returns_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "return_lines" (
    "organization_id" TEXT NOT NULL,
    "return_id" TEXT NOT NULL,
    "line_number" INTEGER NOT NULL,
    "invoice_line_number" INTEGER NOT NULL,
    "product_id" TEXT NOT NULL,
    "unit" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "condition" TEXT NOT NULL,
    "unit_price" DECIMAL(18,4) NOT NULL,
    "discount" DECIMAL(18,4) NOT NULL,
    "tax_rate" DECIMAL(5,2) NOT NULL,
    "amount" DECIMAL(18,4) NOT NULL,
    "tax" DECIMAL(18,4) NOT NULL,

    CONSTRAINT "return_lines_pkey" PRIMARY KEY ("organization_id","return_id","line_number")
);

-- CreateTable
CREATE TABLE "settlements" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "trip_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "handed_in" DECIMAL(18,4) NOT NULL,
    "cash_expenses" DECIMAL(18,4) NOT NULL,
    "cash_expected" DECIMAL(18,4) NOT NULL,
    "variance" DECIMAL(18,4) NOT NULL,
    "notes" TEXT,
    "closed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "settlements_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "settlement_expenses" (
    "organization_id" TEXT NOT NULL,
    "settlement_id" TEXT NOT NULL,
    "line_number" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "amount" DECIMAL(18,4) NOT NULL,
    "receipt_reference" TEXT,

    CONSTRAINT "settlement_expenses_pkey" PRIMARY KEY ("organization_id","settlement_id","line_number")
);

-- CreateIndex
CREATE INDEX "payments_organization_id_updated_at_id_idx" ON "payments"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "payments_organization_id_customer_id_idx" ON "payments"("organization_id", "customer_id");

-- CreateIndex
CREATE INDEX "payments_organization_id_invoice_id_idx" ON "payments"("organization_id", "invoice_id");

-- CreateIndex
CREATE INDEX "payments_organization_id_trip_id_idx" ON "payments"("organization_id", "trip_id");

-- CreateIndex
CREATE INDEX "payments_organization_id_receipt_group_id_idx" ON "payments"("organization_id", "receipt_group_id");

-- CreateIndex
CREATE UNIQUE INDEX "payments_organization_id_number_key" ON "payments"("organization_id", "number");

-- CreateIndex
CREATE INDEX "credit_notes_organization_id_updated_at_id_idx" ON "credit_notes"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "credit_notes_organization_id_customer_id_idx" ON "credit_notes"("organization_id", "customer_id");

-- CreateIndex
CREATE INDEX "credit_notes_organization_id_invoice_id_idx" ON "credit_notes"("organization_id", "invoice_id");

-- CreateIndex
CREATE INDEX "credit_notes_organization_id_trip_id_idx" ON "credit_notes"("organization_id", "trip_id");

-- CreateIndex
CREATE UNIQUE INDEX "credit_notes_organization_id_number_key" ON "credit_notes"("organization_id", "number");

-- CreateIndex
CREATE INDEX "returns_organization_id_updated_at_id_idx" ON "returns"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "returns_organization_id_invoice_id_idx" ON "returns"("organization_id", "invoice_id");

-- CreateIndex
CREATE UNIQUE INDEX "returns_organization_id_number_key" ON "returns"("organization_id", "number");

-- CreateIndex
CREATE INDEX "settlements_organization_id_updated_at_id_idx" ON "settlements"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "settlements_organization_id_trip_id_key" ON "settlements"("organization_id", "trip_id");

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_organization_id_invoice_id_fkey" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_organization_id_trip_id_fkey" FOREIGN KEY ("organization_id", "trip_id") REFERENCES "trips"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_organization_id_salesperson_id_fkey" FOREIGN KEY ("organization_id", "salesperson_id") REFERENCES "salespeople"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "credit_notes" ADD CONSTRAINT "credit_notes_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "credit_notes" ADD CONSTRAINT "credit_notes_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "credit_notes" ADD CONSTRAINT "credit_notes_organization_id_invoice_id_fkey" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "credit_notes" ADD CONSTRAINT "credit_notes_organization_id_return_id_fkey" FOREIGN KEY ("organization_id", "return_id") REFERENCES "returns"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "credit_notes" ADD CONSTRAINT "credit_notes_organization_id_trip_id_fkey" FOREIGN KEY ("organization_id", "trip_id") REFERENCES "trips"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "credit_note_lines" ADD CONSTRAINT "credit_note_lines_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "credit_note_lines" ADD CONSTRAINT "credit_note_lines_organization_id_credit_note_id_fkey" FOREIGN KEY ("organization_id", "credit_note_id") REFERENCES "credit_notes"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "credit_note_lines" ADD CONSTRAINT "credit_note_lines_organization_id_product_id_fkey" FOREIGN KEY ("organization_id", "product_id") REFERENCES "products"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "returns" ADD CONSTRAINT "returns_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "returns" ADD CONSTRAINT "returns_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "returns" ADD CONSTRAINT "returns_organization_id_invoice_id_fkey" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "returns" ADD CONSTRAINT "returns_organization_id_location_id_fkey" FOREIGN KEY ("organization_id", "location_id") REFERENCES "locations"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "returns" ADD CONSTRAINT "returns_organization_id_bad_stock_location_id_fkey" FOREIGN KEY ("organization_id", "bad_stock_location_id") REFERENCES "locations"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "returns" ADD CONSTRAINT "returns_organization_id_trip_id_fkey" FOREIGN KEY ("organization_id", "trip_id") REFERENCES "trips"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "return_lines" ADD CONSTRAINT "return_lines_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "return_lines" ADD CONSTRAINT "return_lines_organization_id_return_id_fkey" FOREIGN KEY ("organization_id", "return_id") REFERENCES "returns"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "return_lines" ADD CONSTRAINT "return_lines_organization_id_product_id_fkey" FOREIGN KEY ("organization_id", "product_id") REFERENCES "products"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "settlements" ADD CONSTRAINT "settlements_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "settlements" ADD CONSTRAINT "settlements_organization_id_trip_id_fkey" FOREIGN KEY ("organization_id", "trip_id") REFERENCES "trips"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "settlement_expenses" ADD CONSTRAINT "settlement_expenses_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "settlement_expenses" ADD CONSTRAINT "settlement_expenses_organization_id_settlement_id_fkey" FOREIGN KEY ("organization_id", "settlement_id") REFERENCES "settlements"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- The customer account's entry types. An entry that concerns an invoice names it; a credit on the account (an
-- unallocated payment, a credit note's remaining amount) and what consumes one (a cash refund) name none.
ALTER TABLE customer_account_entries DROP CONSTRAINT customer_account_entries_type_known;
ALTER TABLE customer_account_entries ADD CONSTRAINT customer_account_entries_type_known CHECK (type IN (
  'invoice', 'invoice_void',
  'payment_allocation', 'payment_allocation_reversal', 'payment_unallocated', 'payment_unallocated_reversal',
  'credit_application', 'credit_application_reversal', 'credit_unapplied', 'credit_unapplied_reversal',
  'credit_refund', 'credit_refund_reversal'));
ALTER TABLE customer_account_entries ADD CONSTRAINT customer_account_entries_invoice_named CHECK (
  (invoice_id IS NULL) = (type IN ('payment_unallocated', 'payment_unallocated_reversal', 'credit_unapplied', 'credit_unapplied_reversal', 'credit_refund', 'credit_refund_reversal')));

-- What the code also checks, held by the database as well.
ALTER TABLE payments ADD CONSTRAINT payments_status_known CHECK (status IN ('posted', 'reversed'));
ALTER TABLE payments ADD CONSTRAINT payments_method_known CHECK (method IN ('cash', 'mobile_money', 'cheque', 'bank_transfer', 'card'));
ALTER TABLE payments ADD CONSTRAINT payments_amount_positive CHECK (amount > 0);
ALTER TABLE payments ADD CONSTRAINT payments_reversal_has_reason CHECK ((status = 'reversed') = (reversal_reason IS NOT NULL AND reversed_at IS NOT NULL));
ALTER TABLE credit_notes ADD CONSTRAINT credit_notes_status_known CHECK (status IN ('applied', 'cancelled'));
ALTER TABLE credit_notes ADD CONSTRAINT credit_notes_type_known CHECK (type IN ('return', 'adjustment'));
ALTER TABLE credit_notes ADD CONSTRAINT credit_notes_amounts_add_up CHECK (subtotal >= 0 AND discount >= 0 AND tax >= 0 AND total = subtotal - discount + tax AND total > 0);
ALTER TABLE credit_notes ADD CONSTRAINT credit_notes_remaining_within_total CHECK (remaining_amount >= 0 AND remaining_amount <= total AND (cash_refund_amount IS NULL OR (cash_refund_amount > 0 AND cash_refund_amount <= total)));
ALTER TABLE credit_notes ADD CONSTRAINT credit_notes_return_typed CHECK ((type = 'return') = (return_id IS NOT NULL));
ALTER TABLE credit_notes ADD CONSTRAINT credit_notes_cancel_has_reason CHECK ((status = 'cancelled') = (cancel_reason IS NOT NULL AND cancelled_at IS NOT NULL));
ALTER TABLE credit_note_lines ADD CONSTRAINT credit_note_lines_type_known CHECK (type IN ('product', 'adjustment') AND (type = 'adjustment' OR product_id IS NOT NULL));
ALTER TABLE credit_note_lines ADD CONSTRAINT credit_note_lines_amounts CHECK (line_number > 0 AND quantity > 0 AND unit_price >= 0 AND discount >= 0 AND amount >= 0 AND tax >= 0);
ALTER TABLE returns ADD CONSTRAINT returns_status_known CHECK (status IN ('processed'));
ALTER TABLE returns ADD CONSTRAINT returns_amounts_add_up CHECK (subtotal >= 0 AND discount >= 0 AND tax >= 0 AND total = subtotal - discount + tax);
ALTER TABLE return_lines ADD CONSTRAINT return_lines_condition_known CHECK (condition IN ('good', 'damaged'));
ALTER TABLE return_lines ADD CONSTRAINT return_lines_unit_known CHECK (unit IN ('case', 'bottle', 'piece'));
ALTER TABLE return_lines ADD CONSTRAINT return_lines_amounts CHECK (line_number > 0 AND invoice_line_number > 0 AND quantity > 0 AND unit_price >= 0 AND discount >= 0 AND amount >= 0 AND tax >= 0);
ALTER TABLE settlements ADD CONSTRAINT settlements_status_known CHECK (status IN ('closed'));
ALTER TABLE settlements ADD CONSTRAINT settlements_amounts CHECK (handed_in >= 0 AND cash_expenses >= 0 AND variance = handed_in - cash_expected);
ALTER TABLE settlement_expenses ADD CONSTRAINT settlement_expenses_kind_known CHECK (kind IN ('allowance', 'purchase') AND amount > 0 AND line_number > 0 AND (kind = 'allowance' OR receipt_reference IS NOT NULL));
