-- The spec's warnings at submit: keys accepted and not acted on (file:line, key path, message).
ALTER TABLE "Job" ADD COLUMN "warnings" JSONB;
