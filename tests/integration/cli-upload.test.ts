/**
 * Workdir upload end to end (docs/spec.md "workdir"): `jobdeck launch DIR` of a laptop-like
 * folder holding task.yaml with `workdir: .`, run from another working directory than the
 * server's, packs the folder (without what .gitignore / .skyignore exclude), uploads it, and the
 * job runs in its own copy; a re-run reuses the stored upload; the size cap is refused by the CLI
 * with the numbers; a link out of the folder (absolute, relative, dangling; in the workdir and in a
 * file_mounts folder) reaches the job as the link itself; a relative workdir submitted without
 * an upload is refused by the server, naming the rule. A real server process, PGlite and PostgreSQL.
 *
 * Needs a built app: `JOBDECK_NEXT_DIST=.next-cli npx next build`, and the same
 * JOBDECK_NEXT_DIST when running vitest.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDetail } from '../../lib/api/types';
import { EXIT } from '../../lib/cli/exit-codes';
import { DB_KINDS } from '../helpers/db';
import { useServerDatabase } from '../helpers/use-database';
import type { ServerProcess } from '../helpers/server';
import { runCli, show, submittedId } from './cli-run';

const TASK = `name: from-laptop
workdir: .
run: |
  cat data/input.txt
  cat link-to-input
  if [ -e build.log ]; then echo "build.log is here"; else echo "build.log was not uploaded"; fi
  if [ -e scratch ]; then echo "scratch is here"; else echo "scratch was not uploaded"; fi
  echo "ran in $PWD"
`;

describe.each(DB_KINDS)('jobdeck launch with a relative workdir (%s)', (kind) => {
  let server: ServerProcess;
  const database = useServerDatabase(kind, 'cli-upload');
  let laptop: string;
  let project: string;
  let mountRoot: string;

  beforeAll(async () => {
    laptop = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-laptop-'));
    project = path.join(laptop, 'project');
    mkdirSync(path.join(project, 'data'), { recursive: true });
    mkdirSync(path.join(project, 'scratch'));
    writeFileSync(path.join(project, 'task.yaml'), TASK);
    writeFileSync(path.join(project, 'data', 'input.txt'), 'the laptop file\n');
    writeFileSync(path.join(project, 'build.log'), 'not to be uploaded\n');
    writeFileSync(path.join(project, 'scratch', 'big.bin'), 'x'.repeat(10_000));
    writeFileSync(path.join(project, '.gitignore'), '*.log\n');
    writeFileSync(path.join(project, '.skyignore'), 'scratch/\n');
    symlinkSync('data/input.txt', path.join(project, 'link-to-input'));
    // file_mounts: a file and a folder from beside the project, at relative and absolute targets.
    mountRoot = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-mount-root-'));
    mkdirSync(path.join(laptop, 'shared', 'inputs', 'deep'), { recursive: true });
    writeFileSync(path.join(laptop, 'shared', 'settings.txt'), 'setting=1\n');
    writeFileSync(path.join(laptop, 'shared', 'inputs', 'deep', 'a.txt'), 'input a\n');
    writeFileSync(path.join(laptop, 'shared', 'inputs', 'skip.tmp'), 'ignored\n');
    writeFileSync(path.join(laptop, 'shared', 'inputs', '.skyignore'), '*.tmp\n');
    mkdirSync(path.join(laptop, 'mounts'));
    writeFileSync(
      path.join(laptop, 'mounts', 'task.yaml'),
      `workdir: .\nfile_mounts:\n  conf/settings.txt: ../shared/settings.txt\n  inputs: ../shared/inputs\n  ${mountRoot}/job/in: ../shared/inputs\nrun: |\n  cat conf/settings.txt inputs/deep/a.txt ${mountRoot}/job/in/deep/a.txt\n  ls inputs\n`,
    );
    server = await database.start({ env: { JOBDECK_FILE_MOUNT_ROOT: mountRoot, JOBDECK_UPLOAD_MAX_BYTES: String(3 * 1024 * 1024) } });
  });

  afterAll(async () => {
    rmSync(laptop, { recursive: true, force: true });
    rmSync(mountRoot, { recursive: true, force: true });
  });

  const stored = () => readdirSync(path.join(server.home, 'uploads')).filter((f) => f.endsWith('.tar.gz'));

  it('packs the folder, the job reads its files in a fresh copy, ignored files stay behind; a re-run reuses the upload', async () => {
    // The CLI runs in the laptop folder (not the server's cwd) and names the project relatively.
    const r = await runCli(server, ['launch', 'project'], { cwd: laptop });
    expect(r.code, show(r)).toBe(EXIT.OK);
    expect(r.stdout).toContain('the laptop file\nthe laptop file\nbuild.log was not uploaded\nscratch was not uploaded\n');
    const id = submittedId(r.stderr);
    expect(r.stderr).toMatch(/Uploaded workdir \. \(.*project\): \d+ entries, \d+ bytes/);
    const ranIn = /ran in (\S+)/.exec(r.stdout)![1];
    expect(ranIn).toMatch(new RegExp(`^${server.home.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/.*attempt-1/work$`));
    expect(stored()).toHaveLength(1);

    const detail = (await (await server.api(`/api/jobs/${id}`)).json()) as JobDetail;
    expect(detail.status).toBe('SUCCEEDED');
    expect(detail.upload?.files).toEqual(expect.arrayContaining(['data/input.txt', 'link-to-input -> data/input.txt', 'task.yaml']));
    expect(detail.upload?.files.some((f) => f.includes('build.log') || f.includes('scratch'))).toBe(false);

    const again = await runCli(server, ['rerun', String(id)]);
    expect(again.code, show(again)).toBe(EXIT.OK);
    expect(again.stdout).toContain('the laptop file\n');
    // Launching the same folder again stores nothing new either: the same content, the same hash.
    const same = await runCli(server, ['launch', path.join(laptop, 'project', 'task.yaml'), '-d']);
    expect(same.code, show(same)).toBe(EXIT.OK);
    expect(stored()).toHaveLength(1);
  });

  it('file_mounts: a local file and folder are uploaded and placed at relative and allowed absolute targets; buckets and other absolute targets refused', async () => {
    const before = stored().length;
    const r = await runCli(server, ['launch', 'mounts'], { cwd: laptop });
    expect(r.code, show(r)).toBe(EXIT.OK);
    expect(r.stdout).toBe('setting=1\ninput a\ninput a\ndeep\n');
    expect(r.stderr).toContain('Uploaded file_mounts conf/settings.txt');
    // The workdir, the file, and the folder mounted at two targets: stored once each.
    expect(stored().length - before).toBe(3);

    writeFileSync(path.join(laptop, 'bucket.yaml'), 'file_mounts:\n  /data: s3://my-bucket/data\nrun: ls /data\n');
    const b = await runCli(server, ['launch', 'bucket.yaml'], { cwd: laptop });
    expect(b.code, show(b)).toBe(EXIT.USAGE);
    expect(b.stderr).toContain('bucket.yaml:2 task[0].file_mounts["/data"]: "s3://my-bucket/data" is a bucket or cloud-storage source, not supported');
    writeFileSync(path.join(laptop, 'outside.yaml'), 'file_mounts:\n  /etc/jobdeck-x: ./bucket.yaml\nrun: ls\n');
    const o = await runCli(server, ['launch', 'outside.yaml'], { cwd: laptop });
    expect(o.code, show(o)).toBe(EXIT.USAGE);
    expect(o.stderr).toContain(`task[0].file_mounts["/etc/jobdeck-x"]: an absolute target is allowed only under the folder the operator allows (JOBDECK_FILE_MOUNT_ROOT); use a relative target (inside the attempt's working folder) or ~/… (allowed here: under ${mountRoot})`);
  });

  it('a folder of 2 MB (more than the 1 MiB of the JSON routes) uploads under the upload route\'s own limit; over the server\'s limit the answer is 413', async () => {
    const big = path.join(laptop, 'big');
    mkdirSync(big);
    writeFileSync(path.join(big, 'task.yaml'), 'workdir: .\nrun: wc -c < weights.bin\n');
    // Random bytes: the archive stays ~2 MB compressed.
    writeFileSync(path.join(big, 'weights.bin'), randomBytes(2_000_000));
    const r = await runCli(server, ['launch', 'big'], { cwd: laptop });
    expect(r.code, show(r)).toBe(EXIT.OK);
    expect(r.stdout).toBe('2000000\n');
    // The server's own limit (JOBDECK_UPLOAD_MAX_BYTES, 3 MiB here) holds at the gate, by Content-Length.
    const over = await server.api('/api/uploads', { method: 'POST', headers: { 'content-type': 'application/gzip' }, body: new Uint8Array(3 * 1024 * 1024 + 1) });
    expect(over.status).toBe(413);
    expect(await over.text()).toContain(`the limit is ${3 * 1024 * 1024} bytes`);
  });

  it('over JOBDECK_UPLOAD_MAX_BYTES: a clear CLI error naming the size and the limit, nothing submitted', async () => {
    const before = ((await (await server.api('/api/jobs')).json()) as { jobs: unknown[] }).jobs.length;
    const r = await runCli(server, ['launch', 'project'], { cwd: laptop, env: { JOBDECK_UPLOAD_MAX_BYTES: '100' } });
    expect(r.code, show(r)).toBe(EXIT.USAGE);
    expect(r.stderr).toMatch(/workdir \.: the upload is \d+ bytes \(compressed\); the limit is 100 bytes \(JOBDECK_UPLOAD_MAX_BYTES\)/);
    expect(((await (await server.api('/api/jobs')).json()) as { jobs: unknown[] }).jobs.length).toBe(before);
  });

  it('a link out of the folder — absolute, or relative and leaving it — is uploaded as the link itself, as rsync -a copies it (SkyPilot): the job sees it, valid or dangling', async () => {
    const other = path.join(laptop, 'linked');
    mkdirSync(path.join(other, 'sub'), { recursive: true });
    writeFileSync(path.join(laptop, 'beside.txt'), 'next to the project\n');
    writeFileSync(
      path.join(other, 'task.yaml'),
      'workdir: .\nfile_mounts:\n  mounted: ../linked-mount\nrun: |\n  readlink host up sub/gone mounted/abs\n  cat host >/dev/null && echo "host resolves"\n  [ -e up ] || echo "up dangles here"\n  [ -L mounted/abs ] && echo "mount link kept"\n',
    );
    symlinkSync('/etc/hostname', path.join(other, 'host'));
    symlinkSync('../beside.txt', path.join(other, 'up'));
    symlinkSync('/no/such/file', path.join(other, 'sub', 'gone'));
    mkdirSync(path.join(laptop, 'linked-mount'));
    symlinkSync('/etc', path.join(laptop, 'linked-mount', 'abs'));
    const r = await runCli(server, ['launch', 'linked'], { cwd: laptop });
    expect(r.code, show(r)).toBe(EXIT.OK);
    // Each link as written; `up` is relative to the job's copy, where no beside.txt is: dangling, as with rsync -a.
    expect(r.stdout).toBe('/etc/hostname\n../beside.txt\n/no/such/file\n/etc\nhost resolves\nup dangles here\nmount link kept\n');
    const detail = (await (await server.api(`/api/jobs/${submittedId(r.stderr)}`)).json()) as JobDetail;
    expect(detail.upload?.files).toEqual(expect.arrayContaining(['host -> /etc/hostname', 'up -> ../beside.txt', 'sub/gone -> /no/such/file']));
  });

  it('the server refuses a relative workdir without an upload, and an unknown upload, naming the rule', async () => {
    const res = await server.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: 'workdir: .\nrun: ls\n' });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('a relative workdir needs its folder uploaded with the job');
    const unknown = await server.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ yaml: 'workdir: .\nrun: ls\n', workdirUpload: 'a'.repeat(64) }) });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain(`workdirUpload ${'a'.repeat(64)} is not an upload of yours: upload the folder first`);
    const notTar = await server.api('/api/uploads', { method: 'POST', headers: { 'content-type': 'application/gzip' }, body: 'plain text' });
    expect(notTar.status).toBe(400);
    const json = await server.api('/api/uploads', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(json.status).toBe(415);
    // Uploading needs the token like every write.
    const anonymous = await fetch(`${server.url}/api/uploads`, { method: 'POST', headers: { 'content-type': 'application/gzip' }, body: 'x' });
    expect(anonymous.status).toBe(401);
  });
});
