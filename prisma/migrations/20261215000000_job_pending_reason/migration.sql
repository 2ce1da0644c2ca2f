-- While PENDING: why the job waits, as the last admission pass that read it said.
ALTER TABLE "Job" ADD COLUMN "pendingReason" TEXT;
