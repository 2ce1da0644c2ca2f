-- Jobs per status kept as rows (docs/design.md §12 "Counts"): the unfiltered counts the dashboard
-- and /metrics ask for read this small table instead of counting every job. Statement triggers
-- append one row per status a statement changed (its net change, from the transition tables), so
-- concurrent writers never wait on a shared counter row; the store folds the rows into one per
-- status now and then (lib/store/status-counts.ts).
CREATE TABLE "JobStatusDelta" (
    "id" BIGSERIAL NOT NULL,
    "status" "JobStatus" NOT NULL,
    "n" INTEGER NOT NULL,
    CONSTRAINT "JobStatusDelta_pkey" PRIMARY KEY ("id")
);

CREATE FUNCTION "jobdeck_job_status_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "JobStatusDelta" ("status", "n") SELECT "status", count(*) FROM new_rows GROUP BY "status";
  RETURN NULL;
END
$$;
CREATE FUNCTION "jobdeck_job_status_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "JobStatusDelta" ("status", "n")
    SELECT "status", sum("d") FROM (
      SELECT "status", -1 AS "d" FROM old_rows
      UNION ALL
      SELECT "status", 1 AS "d" FROM new_rows
    ) AS "changes" GROUP BY "status" HAVING sum("d") <> 0;
  RETURN NULL;
END
$$;
CREATE FUNCTION "jobdeck_job_status_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "JobStatusDelta" ("status", "n") SELECT "status", -count(*) FROM old_rows GROUP BY "status";
  RETURN NULL;
END
$$;
CREATE FUNCTION "jobdeck_job_status_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "JobStatusDelta";
  RETURN NULL;
END
$$;

-- The triggers first: they lock "Job" against writes, so the count below sees every job and
-- every later write lands in a delta (servers sharing the database may be running).
CREATE TRIGGER "Job_status_inserted" AFTER INSERT ON "Job"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "jobdeck_job_status_inserted"();
CREATE TRIGGER "Job_status_updated" AFTER UPDATE ON "Job"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "jobdeck_job_status_updated"();
CREATE TRIGGER "Job_status_deleted" AFTER DELETE ON "Job"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "jobdeck_job_status_deleted"();
CREATE TRIGGER "Job_status_truncated" AFTER TRUNCATE ON "Job"
  FOR EACH STATEMENT EXECUTE FUNCTION "jobdeck_job_status_truncated"();

INSERT INTO "JobStatusDelta" ("status", "n") SELECT "status", count(*) FROM "Job" GROUP BY "status";
