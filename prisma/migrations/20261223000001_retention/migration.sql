-- Retention (docs/design.md "Retention"): when the policy removed a finished job's logs, and the
-- indexes its passes read (finished jobs oldest first, those whose logs are still there first).
-- AlterTable
ALTER TABLE "Job" ADD COLUMN "logsRemovedAt" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "Job_logsRemovedAt_endedAt_idx" ON "Job"("logsRemovedAt", "endedAt");

-- CreateIndex
CREATE INDEX "Job_endedAt_idx" ON "Job"("endedAt");
