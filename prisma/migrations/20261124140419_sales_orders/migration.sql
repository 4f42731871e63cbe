-- AlterTable
ALTER TABLE "organizations" ADD COLUMN     "books_closed_through" DATE;

-- CreateTable
CREATE TABLE "sales_orders" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "number" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "order_date" DATE NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "salesperson_id" TEXT,
    "location_id" TEXT,
    "subtotal" DECIMAL(18,4) NOT NULL,
    "discount" DECIMAL(18,4) NOT NULL,
    "tax" DECIMAL(18,4) NOT NULL,
    "total" DECIMAL(18,4) NOT NULL,
    "note" TEXT,
    "cancel_reason" TEXT,
    "cancelled_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "sales_orders_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "sales_order_lines" (
    "organization_id" TEXT NOT NULL,
    "order_id" TEXT NOT NULL,
    "line_number" INTEGER NOT NULL,
    "product_id" TEXT NOT NULL,
    "unit" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "unit_price" DECIMAL(18,4) NOT NULL,
    "discount" DECIMAL(18,4) NOT NULL,
    "tax_rate" DECIMAL(5,2) NOT NULL,
    "amount" DECIMAL(18,4) NOT NULL,
    "tax" DECIMAL(18,4) NOT NULL,

    CONSTRAINT "sales_order_lines_pkey" PRIMARY KEY ("organization_id","order_id","line_number")
);

-- CreateIndex
CREATE INDEX "sales_orders_organization_id_updated_at_id_idx" ON "sales_orders"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "sales_orders_organization_id_customer_id_idx" ON "sales_orders"("organization_id", "customer_id");

-- CreateIndex
CREATE UNIQUE INDEX "sales_orders_organization_id_number_key" ON "sales_orders"("organization_id", "number");

-- CreateIndex
CREATE INDEX "sales_order_lines_organization_id_product_id_idx" ON "sales_order_lines"("organization_id", "product_id");

-- AddForeignKey
ALTER TABLE "sales_orders" ADD CONSTRAINT "sales_orders_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "sales_orders" ADD CONSTRAINT "sales_orders_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "sales_orders" ADD CONSTRAINT "sales_orders_organization_id_salesperson_id_fkey" FOREIGN KEY ("organization_id", "salesperson_id") REFERENCES "salespeople"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "sales_orders" ADD CONSTRAINT "sales_orders_organization_id_location_id_fkey" FOREIGN KEY ("organization_id", "location_id") REFERENCES "locations"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "sales_order_lines" ADD CONSTRAINT "sales_order_lines_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "sales_order_lines" ADD CONSTRAINT "sales_order_lines_organization_id_order_id_fkey" FOREIGN KEY ("organization_id", "order_id") REFERENCES "sales_orders"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "sales_order_lines" ADD CONSTRAINT "sales_order_lines_organization_id_product_id_fkey" FOREIGN KEY ("organization_id", "product_id") REFERENCES "products"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- What the code also checks, held by the database as well.
ALTER TABLE sales_orders ADD CONSTRAINT sales_orders_status_known CHECK (status IN ('open', 'invoiced', 'cancelled'));
ALTER TABLE sales_orders ADD CONSTRAINT sales_orders_amounts_not_negative CHECK (subtotal >= 0 AND discount >= 0 AND tax >= 0 AND total >= 0);
ALTER TABLE sales_orders ADD CONSTRAINT sales_orders_total_adds_up CHECK (total = subtotal - discount + tax);
ALTER TABLE sales_orders ADD CONSTRAINT sales_orders_cancel_has_reason CHECK (status <> 'cancelled' OR (cancel_reason IS NOT NULL AND cancelled_at IS NOT NULL));
ALTER TABLE sales_order_lines ADD CONSTRAINT sales_order_lines_unit_known CHECK (unit IN ('case', 'bottle', 'piece'));
ALTER TABLE sales_order_lines ADD CONSTRAINT sales_order_lines_quantity_positive CHECK (quantity > 0);
ALTER TABLE sales_order_lines ADD CONSTRAINT sales_order_lines_amounts_not_negative CHECK (unit_price >= 0 AND discount >= 0 AND amount >= 0 AND tax >= 0 AND tax_rate >= 0);
