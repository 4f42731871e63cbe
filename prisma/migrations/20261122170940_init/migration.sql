-- CreateTable
CREATE TABLE "organizations" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "api_access_enabled" BOOLEAN NOT NULL DEFAULT false,
    "base_currency" CHAR(3) NOT NULL,
    "delivery_module_enabled" BOOLEAN NOT NULL DEFAULT false,
    "field_sales_module_enabled" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "organizations_pkey" PRIMARY KEY ("id")
);
