/**
 * The audited actions (docs/design.md §15 "Authorization"): what the audit log records, what
 * GET /api/audit, the Audit page and `jobdeck audit --action` filter by. One list for the store,
 * the API's schema, the dashboard and the CLI. Pure, browser-safe.
 */
export const AUDIT_ACTIONS = [
  'job.submit',
  'job.cancel',
  'job.delete',
  'job.rerun',
  'job.priority',
  'token.create',
  'token.revoke',
  'user.create',
  'user.update',
  'webhook.create',
  'webhook.update',
  'webhook.rotate',
  'webhook.delete',
  'webhook.test',
  'webhook.redeliver',
  'queue.set',
  'queue.delete',
  'login',
  'login.failed',
  'retention.jobs',
  'retention.uploads',
  'group.cancel',
  'group.rerun',
  'group.delete',
  'schedule.create',
  'schedule.update',
  'schedule.pause',
  'schedule.resume',
  'schedule.run',
  'schedule.delete',
] as const;

/** One audited action. */
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
