-- CreateIndex
CREATE INDEX "customers_organization_id_route_id_idx" ON "customers"("organization_id", "route_id");
