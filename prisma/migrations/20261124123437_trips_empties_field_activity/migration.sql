-- AlterTable
ALTER TABLE "stock_documents" ADD COLUMN     "trip_id" TEXT;

-- CreateTable
CREATE TABLE "trips" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "number" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "van_location_id" TEXT NOT NULL,
    "bad_stock_location_id" TEXT,
    "warehouse_location_id" TEXT NOT NULL,
    "salesperson_id" TEXT NOT NULL,
    "route_id" TEXT NOT NULL,
    "business_date" DATE NOT NULL,
    "departed_at" TIMESTAMPTZ(3),
    "returned_at" TIMESTAMPTZ(3),
    "closed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "trips_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "trip_locations" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "trip_id" TEXT NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL,
    "latitude" DECIMAL(9,6) NOT NULL,
    "longitude" DECIMAL(9,6) NOT NULL,
    "accuracy_meters" DECIMAL(8,2),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "trip_locations_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "empties_movements" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "direction" TEXT NOT NULL,
    "product_id" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "customer_id" TEXT,
    "trip_id" TEXT,
    "location_id" TEXT,
    "stock_movement_id" TEXT,
    "document_type" TEXT NOT NULL,
    "document_id" TEXT NOT NULL,
    "line_number" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "empties_movements_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "customer_empties" (
    "organization_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "product_id" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "customer_empties_pkey" PRIMARY KEY ("organization_id","customer_id","product_id")
);

-- CreateTable
CREATE TABLE "visits" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "salesperson_id" TEXT NOT NULL,
    "trip_id" TEXT,
    "visit_date" DATE NOT NULL,
    "check_in_at" TIMESTAMPTZ(3) NOT NULL,
    "check_out_at" TIMESTAMPTZ(3),
    "outcome" TEXT NOT NULL,
    "no_sale_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "visits_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "outlet_activities" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "visit_id" TEXT,
    "salesperson_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "description" TEXT,
    "performed_on" DATE NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "outlet_activities_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "competitor_observations" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "site_kind" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "brand" TEXT NOT NULL,
    "is_own_brand" BOOLEAN NOT NULL,
    "quantity" INTEGER NOT NULL,
    "observed_at" DATE NOT NULL,
    "observed_by" TEXT NOT NULL,
    "visit_id" TEXT,
    "photo_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "competitor_observations_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "photos" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "bytes" BYTEA NOT NULL,
    "sha256" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "photos_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateIndex
CREATE INDEX "trips_organization_id_updated_at_id_idx" ON "trips"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "trips_organization_id_salesperson_id_business_date_idx" ON "trips"("organization_id", "salesperson_id", "business_date");

-- CreateIndex
CREATE UNIQUE INDEX "trips_organization_id_number_key" ON "trips"("organization_id", "number");

-- CreateIndex
CREATE INDEX "trip_locations_organization_id_trip_id_updated_at_id_idx" ON "trip_locations"("organization_id", "trip_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "empties_movements_organization_id_updated_at_id_idx" ON "empties_movements"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "empties_movements_organization_id_customer_id_idx" ON "empties_movements"("organization_id", "customer_id");

-- CreateIndex
CREATE INDEX "empties_movements_organization_id_document_type_document_id_idx" ON "empties_movements"("organization_id", "document_type", "document_id");

-- CreateIndex
CREATE INDEX "visits_organization_id_updated_at_id_idx" ON "visits"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "visits_organization_id_customer_id_idx" ON "visits"("organization_id", "customer_id");

-- CreateIndex
CREATE INDEX "outlet_activities_organization_id_updated_at_id_idx" ON "outlet_activities"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "outlet_activities_organization_id_customer_id_idx" ON "outlet_activities"("organization_id", "customer_id");

-- CreateIndex
CREATE INDEX "competitor_observations_organization_id_updated_at_id_idx" ON "competitor_observations"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "competitor_observations_organization_id_customer_id_observe_idx" ON "competitor_observations"("organization_id", "customer_id", "observed_at");

-- AddForeignKey
ALTER TABLE "stock_documents" ADD CONSTRAINT "stock_documents_organization_id_trip_id_fkey" FOREIGN KEY ("organization_id", "trip_id") REFERENCES "trips"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "trips" ADD CONSTRAINT "trips_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "trips" ADD CONSTRAINT "trips_organization_id_van_location_id_fkey" FOREIGN KEY ("organization_id", "van_location_id") REFERENCES "locations"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "trips" ADD CONSTRAINT "trips_organization_id_bad_stock_location_id_fkey" FOREIGN KEY ("organization_id", "bad_stock_location_id") REFERENCES "locations"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "trips" ADD CONSTRAINT "trips_organization_id_warehouse_location_id_fkey" FOREIGN KEY ("organization_id", "warehouse_location_id") REFERENCES "locations"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "trips" ADD CONSTRAINT "trips_organization_id_salesperson_id_fkey" FOREIGN KEY ("organization_id", "salesperson_id") REFERENCES "salespeople"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "trips" ADD CONSTRAINT "trips_organization_id_route_id_fkey" FOREIGN KEY ("organization_id", "route_id") REFERENCES "routes"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "trip_locations" ADD CONSTRAINT "trip_locations_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "trip_locations" ADD CONSTRAINT "trip_locations_organization_id_trip_id_fkey" FOREIGN KEY ("organization_id", "trip_id") REFERENCES "trips"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "empties_movements" ADD CONSTRAINT "empties_movements_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "empties_movements" ADD CONSTRAINT "empties_movements_organization_id_product_id_fkey" FOREIGN KEY ("organization_id", "product_id") REFERENCES "products"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "empties_movements" ADD CONSTRAINT "empties_movements_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "empties_movements" ADD CONSTRAINT "empties_movements_organization_id_trip_id_fkey" FOREIGN KEY ("organization_id", "trip_id") REFERENCES "trips"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "empties_movements" ADD CONSTRAINT "empties_movements_organization_id_location_id_fkey" FOREIGN KEY ("organization_id", "location_id") REFERENCES "locations"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "empties_movements" ADD CONSTRAINT "empties_movements_organization_id_stock_movement_id_fkey" FOREIGN KEY ("organization_id", "stock_movement_id") REFERENCES "stock_movements"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "customer_empties" ADD CONSTRAINT "customer_empties_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "customer_empties" ADD CONSTRAINT "customer_empties_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "customer_empties" ADD CONSTRAINT "customer_empties_organization_id_product_id_fkey" FOREIGN KEY ("organization_id", "product_id") REFERENCES "products"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "visits" ADD CONSTRAINT "visits_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "visits" ADD CONSTRAINT "visits_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "visits" ADD CONSTRAINT "visits_organization_id_salesperson_id_fkey" FOREIGN KEY ("organization_id", "salesperson_id") REFERENCES "salespeople"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "visits" ADD CONSTRAINT "visits_organization_id_trip_id_fkey" FOREIGN KEY ("organization_id", "trip_id") REFERENCES "trips"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "outlet_activities" ADD CONSTRAINT "outlet_activities_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "outlet_activities" ADD CONSTRAINT "outlet_activities_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "outlet_activities" ADD CONSTRAINT "outlet_activities_organization_id_visit_id_fkey" FOREIGN KEY ("organization_id", "visit_id") REFERENCES "visits"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "outlet_activities" ADD CONSTRAINT "outlet_activities_organization_id_salesperson_id_fkey" FOREIGN KEY ("organization_id", "salesperson_id") REFERENCES "salespeople"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "competitor_observations" ADD CONSTRAINT "competitor_observations_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "competitor_observations" ADD CONSTRAINT "competitor_observations_organization_id_customer_id_fkey" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "competitor_observations" ADD CONSTRAINT "competitor_observations_organization_id_observed_by_fkey" FOREIGN KEY ("organization_id", "observed_by") REFERENCES "salespeople"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "competitor_observations" ADD CONSTRAINT "competitor_observations_organization_id_visit_id_fkey" FOREIGN KEY ("organization_id", "visit_id") REFERENCES "visits"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "competitor_observations" ADD CONSTRAINT "competitor_observations_organization_id_photo_id_fkey" FOREIGN KEY ("organization_id", "photo_id") REFERENCES "photos"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "photos" ADD CONSTRAINT "photos_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- The empties ledger is append-only like the stock ledger (refuse_ledger_change(), migration 20261124063721).
CREATE TRIGGER empties_movements_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON empties_movements
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_ledger_change();

-- What the code also checks, held by the database as well.
ALTER TABLE trips ADD CONSTRAINT trips_status_known CHECK (status IN ('loading', 'in_transit', 'returned', 'closed'));
ALTER TABLE trips ADD CONSTRAINT trips_source_known CHECK (source IN ('erp', 'dms'));
ALTER TABLE trip_locations ADD CONSTRAINT trip_locations_on_earth CHECK (latitude BETWEEN -90 AND 90 AND longitude BETWEEN -180 AND 180);
ALTER TABLE empties_movements ADD CONSTRAINT empties_movements_quantity_positive CHECK (quantity > 0);
ALTER TABLE empties_movements ADD CONSTRAINT empties_movements_direction_known CHECK (direction IN ('in', 'out'));
ALTER TABLE empties_movements ADD CONSTRAINT empties_movements_type_known CHECK (type IN ('issued_with_sale', 'collected', 'received_from_supplier', 'returned_to_supplier', 'bought_back', 'adjustment'));
-- The supplier's movements name no customer or trip; a customer's name the customer.
ALTER TABLE empties_movements ADD CONSTRAINT empties_movements_supplier_has_no_customer CHECK (type NOT IN ('received_from_supplier', 'returned_to_supplier') OR (customer_id IS NULL AND trip_id IS NULL AND location_id IS NOT NULL));
ALTER TABLE empties_movements ADD CONSTRAINT empties_movements_customer_types_name_one CHECK (type NOT IN ('issued_with_sale', 'collected', 'bought_back') OR customer_id IS NOT NULL);
ALTER TABLE empties_movements ADD CONSTRAINT empties_movements_has_a_party CHECK (customer_id IS NOT NULL OR location_id IS NOT NULL);
ALTER TABLE customer_empties ADD CONSTRAINT customer_empties_not_negative CHECK (quantity >= 0);
ALTER TABLE competitor_observations ADD CONSTRAINT competitor_observations_quantity_not_negative CHECK (quantity >= 0);
ALTER TABLE visits ADD CONSTRAINT visits_outcome_known CHECK (outcome IN ('sale', 'no_sale', 'closed_outlet'));
