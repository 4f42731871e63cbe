-- CreateTable
CREATE TABLE "products" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "product_code" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "brand" TEXT,
    "category" TEXT,
    "status" TEXT NOT NULL,
    "pack_size" INTEGER NOT NULL,
    "selling_units" TEXT[],
    "tracks_stock" BOOLEAN NOT NULL,
    "tax_rate" DECIMAL(5,2) NOT NULL,
    "is_empty" BOOLEAN NOT NULL,
    "deposit_amount" DECIMAL(18,4),
    "deposit_currency" CHAR(3),
    "empties" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "products_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "prices" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "product_id" TEXT NOT NULL,
    "price_group" TEXT NOT NULL,
    "unit" TEXT NOT NULL,
    "amount" DECIMAL(18,4) NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "valid_from" DATE NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "prices_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "locations" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "code" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "stock_condition" TEXT,
    "name" TEXT NOT NULL,
    "active" BOOLEAN NOT NULL,
    "route_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "locations_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "salespeople" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "salesman_code" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "phone" TEXT,
    "user_id" TEXT,
    "route_id" TEXT,
    "active" BOOLEAN NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "salespeople_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "routes" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "route_code" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "salesperson_id" TEXT,
    "van_location_id" TEXT,
    "active" BOOLEAN NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "routes_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "journey_plans" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "route_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "journey_plans_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "journey_plan_visits" (
    "organization_id" TEXT NOT NULL,
    "journey_plan_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "weekday" SMALLINT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "frequency" TEXT NOT NULL,
    "week_parity" SMALLINT,

    CONSTRAINT "journey_plan_visits_pkey" PRIMARY KEY ("organization_id","journey_plan_id","weekday","sequence")
);

-- CreateIndex
CREATE INDEX "products_organization_id_updated_at_id_idx" ON "products"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "products_organization_id_product_code_key" ON "products"("organization_id", "product_code");

-- CreateIndex
CREATE INDEX "prices_organization_id_updated_at_id_idx" ON "prices"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "prices_organization_id_product_id_price_group_unit_key" ON "prices"("organization_id", "product_id", "price_group", "unit");

-- CreateIndex
CREATE INDEX "locations_organization_id_updated_at_id_idx" ON "locations"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "locations_organization_id_code_key" ON "locations"("organization_id", "code");

-- CreateIndex
CREATE INDEX "salespeople_organization_id_updated_at_id_idx" ON "salespeople"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "salespeople_organization_id_salesman_code_key" ON "salespeople"("organization_id", "salesman_code");

-- CreateIndex
CREATE INDEX "routes_organization_id_updated_at_id_idx" ON "routes"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "routes_organization_id_route_code_key" ON "routes"("organization_id", "route_code");

-- CreateIndex
CREATE INDEX "journey_plans_organization_id_updated_at_id_idx" ON "journey_plans"("organization_id", "updated_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "journey_plans_organization_id_route_id_key" ON "journey_plans"("organization_id", "route_id");

-- CreateIndex
CREATE UNIQUE INDEX "journey_plan_visits_organization_id_journey_plan_id_custome_key" ON "journey_plan_visits"("organization_id", "journey_plan_id", "customer_id", "weekday");
