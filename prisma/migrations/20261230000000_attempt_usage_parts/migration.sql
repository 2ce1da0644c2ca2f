-- An attempt's usage series in parts (docs/design.md §7): a sample rewrites only the last part.
-- A series stored whole becomes part 0; the next sample starts part 1 when it is full.
ALTER TABLE "AttemptUsage" ADD COLUMN "part" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "AttemptUsage" DROP CONSTRAINT "AttemptUsage_pkey";
ALTER TABLE "AttemptUsage" ADD CONSTRAINT "AttemptUsage_pkey" PRIMARY KEY ("attemptId", "part");
