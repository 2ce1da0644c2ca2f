-- What the active jobs hold, kept beside the counts (docs/design.md §6 "Admission", §12 "Counts"):
-- each delta row now says, per status, executor and queue, the net change of the jobs, their CPUs
-- and their GPUs. The admission pass sums the rows of the statuses that hold CPUs instead of
-- aggregating every active job (an aggregate over 5,000 running jobs on every pass); the counts
-- per status are the same sums as before.
ALTER TABLE "JobStatusDelta" ADD COLUMN "executor" TEXT NOT NULL DEFAULT '';
ALTER TABLE "JobStatusDelta" ADD COLUMN "queue" TEXT NOT NULL DEFAULT '';
ALTER TABLE "JobStatusDelta" ADD COLUMN "cpus" DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE "JobStatusDelta" ADD COLUMN "gpus" DOUBLE PRECISION NOT NULL DEFAULT 0;

CREATE OR REPLACE FUNCTION "jobdeck_job_status_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "JobStatusDelta" ("status", "executor", "queue", "n", "cpus", "gpus")
    SELECT "status", "executor", "queue", count(*), sum("cpus"), sum("gpus") FROM new_rows GROUP BY "status", "executor", "queue";
  RETURN NULL;
END
$$;
CREATE OR REPLACE FUNCTION "jobdeck_job_status_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "JobStatusDelta" ("status", "executor", "queue", "n", "cpus", "gpus")
    SELECT "status", "executor", "queue", sum("d"), sum("c"), sum("g") FROM (
      SELECT "status", "executor", "queue", -1 AS "d", -"cpus" AS "c", -"gpus" AS "g" FROM old_rows
      UNION ALL
      SELECT "status", "executor", "queue", 1 AS "d", "cpus" AS "c", "gpus" AS "g" FROM new_rows
    ) AS "changes" GROUP BY "status", "executor", "queue" HAVING sum("d") <> 0 OR abs(sum("c")) > 1e-9 OR abs(sum("g")) > 1e-9;
  RETURN NULL;
END
$$;
CREATE OR REPLACE FUNCTION "jobdeck_job_status_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "JobStatusDelta" ("status", "executor", "queue", "n", "cpus", "gpus")
    SELECT "status", "executor", "queue", -count(*), -sum("cpus"), -sum("gpus") FROM old_rows GROUP BY "status", "executor", "queue";
  RETURN NULL;
END
$$;

-- The rows again from the jobs, with writers held off meanwhile (servers sharing the database
-- may be running): every later write lands in a delta of the new shape.
LOCK TABLE "Job" IN SHARE ROW EXCLUSIVE MODE;
DELETE FROM "JobStatusDelta";
INSERT INTO "JobStatusDelta" ("status", "executor", "queue", "n", "cpus", "gpus")
  SELECT "status", "executor", "queue", count(*), sum("cpus"), sum("gpus") FROM "Job" GROUP BY "status", "executor", "queue";
