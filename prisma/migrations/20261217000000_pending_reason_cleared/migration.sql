-- A job's status change now clears its pendingReason, and a STARTING / RUNNING job's reason is
-- its executor's scheduler's ("Slurm: Resources"): the admission reasons left on jobs that
-- started before this go.
UPDATE "Job" SET "pendingReason" = NULL WHERE "status" <> 'PENDING' AND "pendingReason" IS NOT NULL;
