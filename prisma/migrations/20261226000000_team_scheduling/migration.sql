-- A team's scheduling (docs/design.md §6 "Admission" and "Why pending", §15 "Quotas"; docs/spec.md
-- "job_recovery"): the highest priority a member may give a queue's jobs, a waiting job's place
-- in line as admission found it, the GPUs a job asks for (what waits ahead of a job), and when a
-- restart or recovery waiting out its backoff starts.
-- AlterTable
ALTER TABLE "Queue" ADD COLUMN "memberMaxPriority" INTEGER;

-- AlterTable
ALTER TABLE "Job" ADD COLUMN "pendingPlace" JSONB,
ADD COLUMN "gpus" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN "nextAttemptAt" TIMESTAMP(3);

-- The GPUs of the jobs not finished yet, from their stored spec (lib/jobs/spec parseAccelerators:
-- `accelerators` is "TYPE:N", "TYPE" (one) or {TYPE: N}, validated at submit), times num_nodes.
UPDATE "Job" j SET "gpus" = COALESCE((
  SELECT max(g.count * GREATEST(1, COALESCE(substring(t ->> 'numNodes' FROM '^([0-9]+)$')::int, 1)))
  FROM jsonb_array_elements(CASE WHEN jsonb_typeof(j."spec" -> 'tasks') = 'array' THEN j."spec" -> 'tasks' ELSE '[]'::jsonb END) AS t,
  LATERAL (SELECT t -> 'resources' -> 'other' -> 'accelerators' AS a) x,
  LATERAL (SELECT CASE jsonb_typeof(x.a)
      WHEN 'string' THEN CASE WHEN strpos(x.a #>> '{}', ':') = 0 THEN 1
        ELSE COALESCE(substring(x.a #>> '{}' FROM ':\s*([0-9]+)\s*$')::float8, 0) END
      WHEN 'object' THEN COALESCE((SELECT CASE jsonb_typeof(e.value)
          WHEN 'number' THEN (e.value #>> '{}')::float8
          WHEN 'null' THEN 1
          WHEN 'string' THEN COALESCE(substring(e.value #>> '{}' FROM '^\s*([0-9]+)\s*$')::float8, 0)
          ELSE 0 END FROM jsonb_each(x.a) e LIMIT 1), 0)
      ELSE 0 END AS count) g
), 0)
WHERE j."status" NOT IN ('SUCCEEDED', 'CANCELLED', 'FAILED', 'FAILED_SETUP', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER');
