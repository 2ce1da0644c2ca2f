-- What a SkyPilot user looks for in a job record (docs/spec.md "SkyPilot keys"):
--   * restarts on `recover_on_exit_codes`, counted apart from the budget's restarts and from
--     recoveries (Task.exitCodeRestarts, summed on Job.exitCodeRestartCount), filled for the jobs
--     before it from their attempts (a restart attempt the budget did not count was one);
--   * `resources.labels` of each task (Job.labels: one map per task that has labels, in task order),
--     filtered as `labels @> '[{"k":"v"}]'` from a GIN index, filled from the stored task specs;
--   * the nodes each attempt ran on (Attempt.nodes: host names in rank order; null: not recorded).
-- AlterTable
ALTER TABLE "Task" ADD COLUMN "exitCodeRestarts" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "Job" ADD COLUMN "exitCodeRestartCount" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "Job" ADD COLUMN "labels" JSONB;
ALTER TABLE "Attempt" ADD COLUMN "nodes" JSONB;

-- Backfill
UPDATE "Task" AS t SET "exitCodeRestarts" = r.n - t."restarts"
  FROM (SELECT "taskId", count(*)::int AS n FROM "Attempt" WHERE "cause" = 'restart' GROUP BY "taskId") AS r
  WHERE r."taskId" = t."id" AND r.n > t."restarts";
UPDATE "Job" AS j SET "exitCodeRestartCount" = s.n
  FROM (SELECT "jobId", sum("exitCodeRestarts")::int AS n FROM "Task" GROUP BY "jobId" HAVING sum("exitCodeRestarts") > 0) AS s
  WHERE s."jobId" = j."id";
UPDATE "Job" AS j SET "labels" = l.labels
  FROM (SELECT "jobId", jsonb_agg(t."spec"->'resources'->'other'->'labels' ORDER BY t."index") AS labels
        FROM "Task" AS t WHERE jsonb_typeof(t."spec"->'resources'->'other'->'labels') = 'object' GROUP BY "jobId") AS l
  WHERE l."jobId" = j."id";

-- CreateIndex
CREATE INDEX "Job_labels_idx" ON "Job" USING GIN ("labels" jsonb_path_ops);
