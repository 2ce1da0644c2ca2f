-- Schedules (docs/design.md §18 "Schedules"): a spec or a stored job submitted on a cron
-- expression. A fire is one statement: the compare-and-set on "nextFireAt", its ScheduleFire row
-- (unique per schedule, cron time and kind) and its job.
-- CreateTable
CREATE TABLE "Schedule" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "userId" INTEGER,
    "cron" TEXT NOT NULL,
    "timezone" TEXT NOT NULL DEFAULT 'UTC',
    "specYaml" TEXT,
    "launch" JSONB,
    "jobId" INTEGER,
    "overlap" TEXT NOT NULL DEFAULT 'skip',
    "catchUp" TEXT NOT NULL DEFAULT 'last',
    "paused" BOOLEAN NOT NULL DEFAULT false,
    "nextFireAt" TIMESTAMP(3),
    "lastFireAt" TIMESTAMP(3),
    "lastJobId" INTEGER,
    "lastOutcome" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Schedule_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ScheduleFire" (
    "id" SERIAL NOT NULL,
    "scheduleId" INTEGER NOT NULL,
    "fireAt" TIMESTAMP(3) NOT NULL,
    "kind" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "jobId" INTEGER,
    "detail" TEXT,
    "serverId" TEXT,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ScheduleFire_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Schedule_name_key" ON "Schedule"("name");

-- CreateIndex
CREATE INDEX "Schedule_paused_nextFireAt_idx" ON "Schedule"("paused", "nextFireAt");

-- CreateIndex
CREATE INDEX "Schedule_userId_id_idx" ON "Schedule"("userId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "ScheduleFire_scheduleId_fireAt_kind_key" ON "ScheduleFire"("scheduleId", "fireAt", "kind");

-- CreateIndex
CREATE INDEX "ScheduleFire_scheduleId_id_idx" ON "ScheduleFire"("scheduleId", "id");

-- AddForeignKey
ALTER TABLE "ScheduleFire" ADD CONSTRAINT "ScheduleFire_scheduleId_fkey" FOREIGN KEY ("scheduleId") REFERENCES "Schedule"("id") ON DELETE CASCADE ON UPDATE CASCADE;
