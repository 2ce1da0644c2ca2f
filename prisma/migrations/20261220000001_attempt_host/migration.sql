-- The host a local attempt's process runs on: a server on another host cannot reach it through
-- its own /proc (failover across hosts settles it from its exit record, else recovers it).
ALTER TABLE "Attempt" ADD COLUMN "hostId" TEXT;
