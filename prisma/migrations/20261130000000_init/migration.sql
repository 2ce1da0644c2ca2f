-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "JobStatus" AS ENUM ('PENDING', 'STARTING', 'RUNNING', 'RECOVERING', 'CANCELLING', 'SUCCEEDED', 'CANCELLED', 'FAILED', 'FAILED_SETUP', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER');

-- CreateEnum
CREATE TYPE "TaskStatus" AS ENUM ('PENDING', 'STARTING', 'RUNNING', 'RECOVERING', 'CANCELLING', 'SUCCEEDED', 'CANCELLED', 'FAILED', 'FAILED_SETUP', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER');

-- CreateEnum
CREATE TYPE "AttemptStatus" AS ENUM ('STARTING', 'RUNNING', 'CANCELLING', 'SUCCEEDED', 'FAILED', 'FAILED_SETUP', 'CANCELLED', 'LOST');

-- CreateTable
CREATE TABLE "Job" (
    "id" SERIAL NOT NULL,
    "submissionId" TEXT,
    "name" TEXT NOT NULL,
    "status" "JobStatus" NOT NULL DEFAULT 'PENDING',
    "statusReason" TEXT,
    "specYaml" TEXT NOT NULL,
    "spec" JSONB NOT NULL,
    "specHash" TEXT NOT NULL,
    "cpus" DOUBLE PRECISION NOT NULL DEFAULT 1,
    "metadata" JSONB,
    "executor" TEXT NOT NULL DEFAULT 'local',
    "submittedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMP(3),
    "endedAt" TIMESTAMP(3),
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "cancelRequestedAt" TIMESTAMP(3),
    "restartCount" INTEGER NOT NULL DEFAULT 0,
    "recoveryCount" INTEGER NOT NULL DEFAULT 0,
    "currentTask" INTEGER NOT NULL DEFAULT 0,
    "taskCount" INTEGER NOT NULL DEFAULT 1,

    CONSTRAINT "Job_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Task" (
    "id" SERIAL NOT NULL,
    "jobId" INTEGER NOT NULL,
    "index" INTEGER NOT NULL,
    "name" TEXT,
    "status" "TaskStatus" NOT NULL DEFAULT 'PENDING',
    "statusReason" TEXT,
    "spec" JSONB NOT NULL,
    "restarts" INTEGER NOT NULL DEFAULT 0,
    "recoveries" INTEGER NOT NULL DEFAULT 0,
    "exitCode" INTEGER,
    "startedAt" TIMESTAMP(3),
    "endedAt" TIMESTAMP(3),

    CONSTRAINT "Task_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Attempt" (
    "id" SERIAL NOT NULL,
    "jobId" INTEGER NOT NULL,
    "taskId" INTEGER NOT NULL,
    "number" INTEGER NOT NULL,
    "status" "AttemptStatus" NOT NULL DEFAULT 'STARTING',
    "statusReason" TEXT,
    "cause" TEXT NOT NULL DEFAULT 'first',
    "executor" TEXT NOT NULL DEFAULT 'local',
    "executorRef" TEXT,
    "pid" INTEGER,
    "pidStartTime" TEXT,
    "exitCode" INTEGER,
    "logPath" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMP(3),
    "endedAt" TIMESTAMP(3),

    CONSTRAINT "Attempt_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "JobEvent" (
    "id" SERIAL NOT NULL,
    "jobId" INTEGER NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "entity" TEXT NOT NULL,
    "taskIndex" INTEGER,
    "attemptNumber" INTEGER,
    "from" TEXT,
    "to" TEXT NOT NULL,
    "reason" TEXT,

    CONSTRAINT "JobEvent_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Job_submissionId_key" ON "Job"("submissionId");

-- CreateIndex
CREATE INDEX "Job_status_id_idx" ON "Job"("status", "id");

-- CreateIndex
CREATE INDEX "Job_submittedAt_idx" ON "Job"("submittedAt");

-- CreateIndex
CREATE INDEX "Job_name_idx" ON "Job"("name");

-- CreateIndex
CREATE UNIQUE INDEX "Task_jobId_index_key" ON "Task"("jobId", "index");

-- CreateIndex
CREATE INDEX "Attempt_jobId_idx" ON "Attempt"("jobId");

-- CreateIndex
CREATE INDEX "Attempt_status_idx" ON "Attempt"("status");

-- CreateIndex
CREATE UNIQUE INDEX "Attempt_taskId_number_key" ON "Attempt"("taskId", "number");

-- CreateIndex
CREATE INDEX "JobEvent_jobId_id_idx" ON "JobEvent"("jobId", "id");

-- AddForeignKey
ALTER TABLE "Task" ADD CONSTRAINT "Task_jobId_fkey" FOREIGN KEY ("jobId") REFERENCES "Job"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Attempt" ADD CONSTRAINT "Attempt_taskId_fkey" FOREIGN KEY ("taskId") REFERENCES "Task"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "JobEvent" ADD CONSTRAINT "JobEvent_jobId_fkey" FOREIGN KEY ("jobId") REFERENCES "Job"("id") ON DELETE CASCADE ON UPDATE CASCADE;

