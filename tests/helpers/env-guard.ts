/**
 * Gives every test file the environment it started with (a setup file of both projects,
 * vitest.config.mts). The files of a project share their worker processes (`isolate: false`,
 * docs/testing.md "Running"), so a variable a file sets — `TZ`, `JOBDECK_WEBHOOK_ALLOW_PRIVATE`,
 * `JOBDECK_LOCAL_GPUS` — would otherwise reach the files after it in the same worker, and the
 * servers and CLIs they start. After the file's last hook, variables it added are removed and
 * those it changed or removed are set back.
 */
import { afterAll } from 'vitest';

// Read when vitest runs this setup file, before it imports the test file.
const before: Readonly<Record<string, string | undefined>> = { ...process.env };

afterAll(() => {
  for (const k of Object.keys(process.env)) if (!(k in before)) delete process.env[k];
  for (const [k, v] of Object.entries(before)) if (process.env[k] !== v && v !== undefined) process.env[k] = v;
});
