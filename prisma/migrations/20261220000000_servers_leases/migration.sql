-- Several servers on one PostgreSQL: a Server row per process start, and a lease per job
-- (owner, epoch, expiry) so that exactly one live server steps each job.
CREATE TABLE "Server" (
    "id" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "hostId" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "heartbeatAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "stoppedAt" TIMESTAMP(3),
    "takeovers" INTEGER NOT NULL DEFAULT 0,
    CONSTRAINT "Server_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Server_heartbeatAt_idx" ON "Server"("heartbeatAt");

ALTER TABLE "Job" ADD COLUMN "ownerId" TEXT,
ADD COLUMN "leaseEpoch" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "leaseExpiresAt" TIMESTAMP(3);
CREATE INDEX "Job_ownerId_leaseExpiresAt_idx" ON "Job"("ownerId", "leaseExpiresAt");
