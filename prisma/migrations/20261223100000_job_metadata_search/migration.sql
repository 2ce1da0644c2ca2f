-- The search's metadata filter (docs/design.md "Search"): `metadata=key:value` is jsonb
-- containment, answered from a GIN index. Prisma's JSON filters compile to `@>` only together
-- with "is an array", so the filter reads this generated one-element array of the metadata
-- (`[m] @> [{"k":"v"}]` exactly when `m @> {"k":"v"}`). Stored: a GIN index needs the values.
-- jsonb_insert, not jsonb_build_array: a generation expression must be immutable (and it is
-- strict: null metadata, null column).
-- AlterTable
ALTER TABLE "Job" ADD COLUMN "metadataSet" JSONB GENERATED ALWAYS AS (jsonb_insert('[]'::jsonb, '{0}', "metadata")) STORED;

-- CreateIndex
CREATE INDEX "Job_metadataSet_idx" ON "Job" USING GIN ("metadataSet" jsonb_path_ops);
