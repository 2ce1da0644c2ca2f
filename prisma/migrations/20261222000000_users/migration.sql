-- Users, personal API tokens and who submitted a job (docs/design.md "Authorization").
CREATE TABLE "User" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "role" TEXT NOT NULL DEFAULT 'member',
    "passwordHash" TEXT,
    "oidcSubject" TEXT,
    "maxRunningCpus" DOUBLE PRECISION,
    "maxPendingJobs" INTEGER,
    "disabledAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "User_name_key" ON "User"("name");
CREATE UNIQUE INDEX "User_oidcSubject_key" ON "User"("oidcSubject");

CREATE TABLE "ApiToken" (
    "id" SERIAL NOT NULL,
    "userId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMP(3),
    "expiresAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),
    CONSTRAINT "ApiToken_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "ApiToken_hash_key" ON "ApiToken"("hash");
CREATE INDEX "ApiToken_userId_idx" ON "ApiToken"("userId");
ALTER TABLE "ApiToken" ADD CONSTRAINT "ApiToken_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The first admin: the admin token file (or JOBDECK_TOKEN) authenticates as user 1.
INSERT INTO "User" ("id", "name", "role") VALUES (1, 'admin', 'admin');
SELECT setval('"User_id_seq"'::regclass, 1);

ALTER TABLE "Job" ADD COLUMN "userId" INTEGER, ADD COLUMN "tokenId" INTEGER;
CREATE INDEX "Job_userId_id_idx" ON "Job"("userId", "id");
ALTER TABLE "Queue" ADD COLUMN "userId" INTEGER;
ALTER TABLE "WebhookSubscription" ADD COLUMN "userId" INTEGER;

-- Everything that exists was made by the one admin there was.
UPDATE "Job" SET "userId" = 1;
UPDATE "Queue" SET "userId" = 1;
UPDATE "WebhookSubscription" SET "userId" = 1;
