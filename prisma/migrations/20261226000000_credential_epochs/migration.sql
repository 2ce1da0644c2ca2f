-- Credentials end with the events that should end them (docs/design.md §15 "Authorization"):
-- disabling a user bumps both of its epochs, changing its password its session epoch; a session
-- cookie carries the session epoch it was issued under and a personal token the token epoch, and
-- either stops authenticating once its user's epoch has moved on — re-enabling the user does not
-- bring them back.
ALTER TABLE "User" ADD COLUMN "sessionEpoch" INTEGER NOT NULL DEFAULT 0, ADD COLUMN "tokenEpoch" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "ApiToken" ADD COLUMN "userEpoch" INTEGER NOT NULL DEFAULT 0;
