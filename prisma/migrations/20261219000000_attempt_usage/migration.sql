-- Resource usage per attempt: totals and peaks on the row, the downsampled series beside it.
ALTER TABLE "Attempt" ADD COLUMN "cpuMs" DOUBLE PRECISION,
  ADD COLUMN "rssBytes" DOUBLE PRECISION,
  ADD COLUMN "peakRssBytes" DOUBLE PRECISION,
  ADD COLUMN "peakProcs" INTEGER,
  ADD COLUMN "usageAt" TIMESTAMP(3);

CREATE TABLE "AttemptUsage" (
    "attemptId" INTEGER NOT NULL,
    "points" JSONB NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "AttemptUsage_pkey" PRIMARY KEY ("attemptId")
);

ALTER TABLE "AttemptUsage" ADD CONSTRAINT "AttemptUsage_attemptId_fkey" FOREIGN KEY ("attemptId") REFERENCES "Attempt"("id") ON DELETE CASCADE ON UPDATE CASCADE;
