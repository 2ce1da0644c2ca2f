-- The audit log (docs/design.md "Authorization"): append-only, enforced by the database for
-- row writes (TRUNCATE stays an operator's tool on the database itself).
CREATE TABLE "AuditEvent" (
    "id" SERIAL NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "action" TEXT NOT NULL,
    "userId" INTEGER,
    "userName" TEXT,
    "tokenPrefix" TEXT,
    "ip" TEXT,
    "target" TEXT,
    "detail" JSONB,
    CONSTRAINT "AuditEvent_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "AuditEvent_at_idx" ON "AuditEvent"("at");
CREATE INDEX "AuditEvent_action_at_idx" ON "AuditEvent"("action", "at");
CREATE INDEX "AuditEvent_userId_at_idx" ON "AuditEvent"("userId", "at");

CREATE FUNCTION "jobdeck_audit_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the audit log is append-only';
END
$$;
CREATE TRIGGER "AuditEvent_append_only" BEFORE UPDATE OR DELETE ON "AuditEvent"
  FOR EACH ROW EXECUTE FUNCTION "jobdeck_audit_append_only"();
