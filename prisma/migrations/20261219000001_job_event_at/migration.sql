-- The charts page reads a time range of job events.
CREATE INDEX "JobEvent_at_idx" ON "JobEvent"("at");
