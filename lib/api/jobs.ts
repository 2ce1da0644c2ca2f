/**
 * The job API's operations, between the route handlers (which parse with lib/api/request.ts
 * and answer) and lib/jobs (which decides): each one calls lib/jobs and turns its domain
 * outcomes into the HTTP answers of the contract — ApiErrors (problem+json) for "not found",
 * "already terminal", "invalid spec", "different spec for this submissionId".
 */
import type { PrismaClient } from '../generated/prisma/client';
import { getDatabase } from '../db';
import { getJobDetail, listJobs } from '../jobs/queries';
import { checkJobSpec, formatSpecIssue, SpecError, type SpecIssue } from '../jobs/spec';
import { SubmissionConflictError, submitJobSpec, type SubmitInput, type SubmitOutcome } from '../jobs/submit';
import { ApiError, conflict, notFound } from './errors';
import type { ListParams } from './request';
import type { JobDetail, JobList } from './types';

/** How many spec issues the `detail` text of a spec problem spells out (all are in `issues`). */
const DETAIL_ISSUES = 5;

/** The Prisma client of the process-wide database (opened by the server). */
export async function prisma(): Promise<PrismaClient> {
  return (await getDatabase()).prisma;
}

/**
 * The problem for an invalid spec: 400 "Invalid job spec", `detail` = the first issues as
 * `file:line path: message` lines, `issues` = every issue with file, line, column and key path.
 */
export function specProblem(issues: SpecIssue[]): ApiError {
  const lines = issues.slice(0, DETAIL_ISSUES).map(formatSpecIssue);
  if (issues.length > DETAIL_ISSUES) lines.push(`(and ${issues.length - DETAIL_ISSUES} more)`);
  return new ApiError(400, 'Invalid job spec', lines.join('\n') || 'the job spec is invalid', { issues });
}

/**
 * Submits a job (lib/jobs/submit.ts).
 * @throws ApiError 400 with `issues` for an invalid spec; 409 when the submissionId belongs to
 *   a job with a different spec (`jobId` names it).
 */
export async function submit(db: PrismaClient, input: SubmitInput): Promise<SubmitOutcome> {
  try {
    return await submitJobSpec(db, input);
  } catch (err) {
    if (err instanceof SpecError) throw specProblem(err.issues);
    if (err instanceof SubmissionConflictError) throw conflict(err.message, { jobId: err.jobId, submissionId: err.submissionId });
    throw err;
  }
}

/** Validates YAML for the editor: `{ ok, issues }` (never throws for a bad spec). */
export function validateSpec(text: string, filename?: string): { ok: boolean; issues: SpecIssue[] } {
  const { issues } = checkJobSpec(text, { filename });
  return { ok: issues.length === 0, issues };
}

/** A page of jobs (lib/jobs/queries.ts listJobs). */
export function list(db: PrismaClient, p: ListParams): Promise<JobList> {
  return listJobs(db, { status: p.status, q: p.q, limit: p.limit, beforeId: p.beforeId });
}

/**
 * One job with tasks, attempts and events.
 * @throws ApiError 404 "job 123 not found".
 */
export async function detail(db: PrismaClient, id: number): Promise<JobDetail> {
  const job = await getJobDetail(db, id);
  if (!job) throw notFound(`job ${id} not found`);
  return job;
}
