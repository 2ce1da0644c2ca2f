/**
 * JOBDECK_ISOLATION=auto as root (lib/server/data-modes.ts settleAutoIsolation): isolation is on
 * only when it can work — a data folder the jobs' accounts can pass through and a run account
 * that may run jobs; otherwise jobdeck serves single-user, saying why (the README's quick start as
 * root: ~/.jobdeck in root's private home, no jobdeck-run). An explicit `on` is left as it is: its
 * start is refused instead (prepareDataFolderModes).
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isolationFromEnv } from '../../lib/config';
import { DataFolderModeError, prepareDataFolderModes, settleAutoIsolation } from '../../lib/server/data-modes';

const root = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-iso-auto-'));
chmodSync(root, 0o755); // mkdtemp makes it 0700: the folders below decide
afterAll(() => rmSync(root, { recursive: true, force: true }));

function folder(name: string, mode: number): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { mode });
  return path.join(dir, 'home');
}

describe('JOBDECK_ISOLATION=auto as root', () => {
  // `nobody` (uid 65534) is an account a job may run as: not root, not jobdeck, above 1000.
  const asRoot = (env: Record<string, string> = {}) => isolationFromEnv({ JOBDECK_RUN_ACCOUNT: 'nobody', ...env }, 0);

  it('stays on when the data folder can be passed through and the run account may run jobs', async () => {
    expect(await settleAutoIsolation(folder('open', 0o755), asRoot())).toMatchObject({ on: true, singleUser: false });
  });

  it('serves single-user, saying why, when the data folder is in a private folder', async () => {
    const home = folder('private', 0o700);
    const iso = await settleAutoIsolation(home, asRoot());
    expect(iso).toMatchObject({ on: false, singleUser: true });
    expect(iso.why).toContain(`cannot pass through ${path.dirname(home)}`);
    expect(iso.why).toContain('JOBDECK_HOME');
  });

  it('serves single-user when the run account does not exist, naming the command that makes it', async () => {
    const iso = await settleAutoIsolation(folder('open2', 0o755), asRoot({ JOBDECK_RUN_ACCOUNT: 'jobdeck-no-such-account' }));
    expect(iso).toMatchObject({ on: false, singleUser: true });
    expect(iso.why).toContain('there is no OS account jobdeck-no-such-account (useradd --create-home --user-group jobdeck-no-such-account)');
  });

  it('leaves an explicit on as it is: its start is refused instead, naming the folder', async () => {
    const home = folder('private2', 0o700);
    const on = asRoot({ JOBDECK_ISOLATION: 'on' });
    expect(await settleAutoIsolation(home, on)).toBe(on);
    expect(() => prepareDataFolderModes(home, on)).toThrow(DataFolderModeError);
    expect(() => prepareDataFolderModes(home, on)).toThrow(`must pass through ${path.dirname(home)} (mode 0700)`);
  });
});
