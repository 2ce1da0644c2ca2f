-- Admission order: 0–1000, higher first, FIFO within a priority (docs/design.md §6 "Admission").
ALTER TABLE "Job" ADD COLUMN "priority" INTEGER NOT NULL DEFAULT 500;

-- The admission pass reads an executor's waiting jobs in line order (priority desc, id), a page at a time.
CREATE INDEX "Job_status_executor_priority_id_idx" ON "Job"("status", "executor", "priority" DESC, "id");
