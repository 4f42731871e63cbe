-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "order_id" TEXT;

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_organization_id_order_id_fkey" FOREIGN KEY ("organization_id", "order_id") REFERENCES "sales_orders"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

