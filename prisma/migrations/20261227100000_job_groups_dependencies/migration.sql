-- Groups (arrays and sweeps submitted as one) and job-level dependencies (docs/design.md §16
-- "Groups", §17 "Dependencies"). A group's jobs are ordinary jobs that carry the group's id and
-- their slot; a dependent waits PENDING outside its executor's line while "depsWaiting".
-- AlterTable
ALTER TABLE "Job" ADD COLUMN "groupId" INTEGER,
ADD COLUMN "groupIndex" INTEGER,
ADD COLUMN "groupLead" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN "scheduleId" INTEGER,
ADD COLUMN "depsWaiting" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN "readyAt" TIMESTAMP(3);

-- CreateTable
CREATE TABLE "JobGroup" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "array" JSONB NOT NULL,
    "userId" INTEGER,
    "tokenId" INTEGER,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "JobGroup_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "JobDependency" (
    "jobId" INTEGER NOT NULL,
    "onJobId" INTEGER NOT NULL,
    "after" TEXT NOT NULL,

    CONSTRAINT "JobDependency_pkey" PRIMARY KEY ("jobId","onJobId")
);

-- CreateIndex
CREATE INDEX "Job_groupId_groupIndex_idx" ON "Job"("groupId", "groupIndex");

-- CreateIndex
CREATE INDEX "Job_scheduleId_id_idx" ON "Job"("scheduleId", "id");

-- CreateIndex
CREATE INDEX "Job_depsWaiting_status_idx" ON "Job"("depsWaiting", "status");

-- CreateIndex
CREATE INDEX "JobGroup_userId_id_idx" ON "JobGroup"("userId", "id");

-- CreateIndex
CREATE INDEX "JobDependency_onJobId_idx" ON "JobDependency"("onJobId");

-- AddForeignKey
ALTER TABLE "JobDependency" ADD CONSTRAINT "JobDependency_jobId_fkey" FOREIGN KEY ("jobId") REFERENCES "Job"("id") ON DELETE CASCADE ON UPDATE CASCADE;
