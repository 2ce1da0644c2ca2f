-- Compressed finished logs (docs/design.md §8 "Compressed logs"): when the compressor handled an
-- attempt's logs, and the index its rounds read (finished attempts not handled yet, oldest end first).
-- AlterTable
ALTER TABLE "Attempt" ADD COLUMN "logCompressedAt" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "Attempt_logCompressedAt_endedAt_idx" ON "Attempt"("logCompressedAt", "endedAt");
