-- Jobs run as OS accounts (docs/design.md §16 "Isolation"): each user may be mapped to one; each
-- attempt records the account it ran as.
ALTER TABLE "User" ADD COLUMN "osUser" TEXT;
ALTER TABLE "Attempt" ADD COLUMN "osUser" TEXT;

-- An attempt's own token (JOBDECK_TOKEN in its environment): a personal token of its submitter
-- tied to the attempt, deleted with it.
ALTER TABLE "ApiToken" ADD COLUMN "attemptId" INTEGER;
CREATE UNIQUE INDEX "ApiToken_attemptId_key" ON "ApiToken"("attemptId");
ALTER TABLE "ApiToken" ADD CONSTRAINT "ApiToken_attemptId_fkey" FOREIGN KEY ("attemptId") REFERENCES "Attempt"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The attempt's end revokes its token in the same statement as the status write, whoever writes
-- it (any server, the recovery after a restart), so no token outlives its attempt.
CREATE FUNCTION "jobdeck_attempt_token_end"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "ApiToken" SET "revokedAt" = now() WHERE "attemptId" = NEW."id" AND "revokedAt" IS NULL;
  RETURN NULL;
END
$$;
CREATE TRIGGER "Attempt_token_end" AFTER UPDATE OF "status" ON "Attempt"
  FOR EACH ROW WHEN (NEW."status" IN ('SUCCEEDED', 'FAILED', 'FAILED_SETUP', 'CANCELLED', 'LOST') AND OLD."status" IS DISTINCT FROM NEW."status")
  EXECUTE FUNCTION "jobdeck_attempt_token_end"();

-- Who sent each upload: a submit names only an upload its user sent. For uploads stored before
-- this migration, the submitters of the jobs that name them (a user whose upload no job names
-- sends its folder again, as `jobdeck launch` does anyway).
CREATE TABLE "UploadOwner" (
    "hash" TEXT NOT NULL,
    "userId" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "UploadOwner_pkey" PRIMARY KEY ("hash","userId")
);
CREATE INDEX "UploadOwner_userId_idx" ON "UploadOwner"("userId");
ALTER TABLE "UploadOwner" ADD CONSTRAINT "UploadOwner_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
INSERT INTO "UploadOwner" ("hash", "userId")
  SELECT DISTINCT "h", "userId" FROM (
    SELECT "launch"->>'workdirUpload' AS "h", "userId" FROM "Job"
      WHERE "userId" IS NOT NULL AND jsonb_typeof("launch") = 'object'
    UNION ALL
    SELECT "m"."value"->>'hash', "j"."userId" FROM "Job" AS "j"
      CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof("j"."launch"->'fileMountUploads') = 'object' THEN "j"."launch"->'fileMountUploads' ELSE '{}'::jsonb END) AS "m"
      WHERE "j"."userId" IS NOT NULL
  ) AS "named" WHERE "h" ~ '^[0-9a-f]{64}$';
