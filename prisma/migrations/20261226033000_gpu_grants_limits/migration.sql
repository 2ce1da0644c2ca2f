-- GPUs as devices, GPU quotas and a queue's start timeout (docs/design.md §6 "GPUs").
-- A job's GPUs in all (quotas, accounting), its alternatives per node, and the devices granted
-- to it while it is active: read back by every server's admission pass, so a server that
-- restarts (even after kill -9) never grants a held device twice. Jobs written before this
-- migration ask for nothing here (null): an active one keeps running as it was launched. Job.gpus
-- (what a job asks for in all) came with the team-scheduling migration before this one.
ALTER TABLE "Job" ADD COLUMN "gpuRequest" JSONB,
  ADD COLUMN "gpuGrant" JSONB;

-- What each attempt held: its GPU-seconds are gpus × its run time.
ALTER TABLE "Attempt" ADD COLUMN "gpus" DOUBLE PRECISION,
  ADD COLUMN "gpuGrant" JSONB;

-- GPU-hours read only the attempts that held GPUs.
CREATE INDEX "Attempt_gpus_endedAt_idx" ON "Attempt"("gpus", "endedAt");

-- Queue limits and per-user quotas on GPUs, beside the CPU ones; a queue's own start timeout.
ALTER TABLE "Queue" ADD COLUMN "maxGpus" DOUBLE PRECISION,
  ADD COLUMN "startTimeoutMs" DOUBLE PRECISION;

ALTER TABLE "User" ADD COLUMN "maxRunningGpus" DOUBLE PRECISION;
