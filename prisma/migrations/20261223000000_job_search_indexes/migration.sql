-- Name search (case-insensitive substring, ILIKE '%…%') from a trigram GIN index instead of a
-- scan of every name (docs/design.md "Search"). pg_trgm is a trusted contrib extension on
-- PostgreSQL (the database owner may create it); PGlite loads it (lib/db/pglite-extensions.mjs).
CREATE EXTENSION IF NOT EXISTS "pg_trgm";

-- CreateIndex
CREATE INDEX "Job_name_trgm_idx" ON "Job" USING GIN ("name" gin_trgm_ops);

-- A status + submitted-time range filter reads one range of this index (docs/design.md "Search").
-- CreateIndex
CREATE INDEX "Job_status_submittedAt_idx" ON "Job"("status", "submittedAt");
