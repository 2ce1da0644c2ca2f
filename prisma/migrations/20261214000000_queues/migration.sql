-- Operator queues with limits (docs/design.md §6 "Admission"); the default queue is no row.
CREATE TABLE "Queue" (
    "name" TEXT NOT NULL,
    "maxRunning" INTEGER,
    "maxCpus" DOUBLE PRECISION,
    "defaultPriority" INTEGER,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Queue_pkey" PRIMARY KEY ("name")
);

-- The queue a job is in.
ALTER TABLE "Job" ADD COLUMN "queue" TEXT NOT NULL DEFAULT 'default';

-- One queue's part of an executor's line (the reasons of a queue at its limit).
CREATE INDEX "Job_status_executor_queue_priority_id_idx" ON "Job"("status", "executor", "queue", "priority" DESC, "id");
