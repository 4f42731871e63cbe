-- AlterTable
ALTER TABLE "external_postings" ADD COLUMN     "related_refs" TEXT[] DEFAULT ARRAY[]::TEXT[];
