-- Bytes of output an attempt's log could not take (a full disk): the log pump's count from the
-- exit record, shown with the attempt (docs/design.md §8).
ALTER TABLE "Attempt" ADD COLUMN "logLostBytes" DOUBLE PRECISION;
