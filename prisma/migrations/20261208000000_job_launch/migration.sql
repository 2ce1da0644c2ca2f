-- What was submitted beside the YAML (the launch overrides) and by what, so a re-run submits
-- exactly what ran and the job page can say where it came from.
ALTER TABLE "Job" ADD COLUMN "launch" JSONB;
ALTER TABLE "Job" ADD COLUMN "origin" TEXT NOT NULL DEFAULT 'api';
