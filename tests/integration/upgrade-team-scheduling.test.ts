/**
 * The migration 20261226000000_team_scheduling on a database with jobs from before it (both
 * kinds): the jobs not finished get the GPUs their stored spec asks for (Job.gpus: the place in
 * line says what waits ahead of a job), in every form `accelerators` takes, times num_nodes; a
 * finished job, or one asking for none, keeps 0; the new columns start empty.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../lib/db/migrate';
import { DB_KINDS } from '../helpers/db';
import { openEmptyRawSql } from '../helpers/raw-sql';

const MIGRATION = '20261226000000_team_scheduling';

/** A stored spec (Job.spec) whose tasks ask for these accelerators (undefined: none) on these nodes. */
const spec = (...tasks: Array<{ acc?: unknown; nodes?: number }>) =>
  JSON.stringify({ tasks: tasks.map((t) => ({ run: 'x', resources: { cpus: 1, other: t.acc === undefined ? {} : { accelerators: t.acc } }, ...(t.nodes ? { numNodes: t.nodes } : {}) })) });

describe.each(DB_KINDS)('upgrade to team scheduling (%s)', (kind) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it("fills Job.gpus of the jobs not finished from their spec; the new columns start empty", async () => {
    const sql = await openEmptyRawSql(kind, 'upgrade-team-scheduling', cleanups);
    const all = readMigrations();
    await migrate(sql, all.filter((m) => m.name < MIGRATION));
    const jobs: Array<[string, string, string]> = [
      ['typed', 'PENDING', spec({ acc: 'A100:2' })],
      ['bare', 'PENDING', spec({ acc: 'T4' })],
      ['map', 'RUNNING', spec({ acc: { V100: 3 } })],
      ['map-null', 'PENDING', spec({ acc: { H100: null } })],
      ['gang', 'PENDING', spec({ acc: 'A100:2', nodes: 4 })],
      ['pipeline', 'PENDING', spec({}, { acc: 'L4:1' }, { acc: 'L4:8' })],
      ['none', 'PENDING', spec({})],
      ['finished', 'SUCCEEDED', spec({ acc: 'A100:8' })],
      ['odd', 'PENDING', JSON.stringify({ tasks: 'not a list' })],
    ];
    for (const [name, status, s] of jobs) await sql.query(`INSERT INTO "Job" ("name", "specYaml", "spec", "specHash", "status") VALUES ($1, 'run: x', $2::jsonb, 'h', $3::"JobStatus")`, [name, s, status]);
    await sql.query(`INSERT INTO "Queue" ("name") VALUES ('gpu')`);
    expect((await migrate(sql, all.filter((m) => m.name <= MIGRATION))).applied).toEqual([MIGRATION]);
    const rows = await sql.query<{ name: string; gpus: number; pendingPlace: unknown; nextAttemptAt: unknown }>(`SELECT "name", "gpus", "pendingPlace", "nextAttemptAt" FROM "Job" ORDER BY "id"`);
    expect(rows.map((r) => [r.name, Number(r.gpus)])).toEqual([
      ['typed', 2],
      ['bare', 1],
      ['map', 3],
      ['map-null', 1],
      ['gang', 8],
      ['pipeline', 8],
      ['none', 0],
      ['finished', 0],
      ['odd', 0],
    ]);
    expect(rows.every((r) => r.pendingPlace === null && r.nextAttemptAt === null)).toBe(true);
    expect(await sql.query(`SELECT "memberMaxPriority" FROM "Queue"`)).toEqual([{ memberMaxPriority: null }]);
  });
});
