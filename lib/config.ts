import os from 'node:os';
import path from 'node:path';

/**
 * jobdeck's configuration, read from the environment once per call (cheap; no caching so tests
 * can set variables before starting a server).
 *
 * - `PORT` (default 3000), `HOST` (default 127.0.0.1)
 * - `JOBDECK_HOME`: data folder (default `~/.jobdeck`): embedded database, attempt folders, token
 * - `DATABASE_URL`: `postgresql://…` to use a PostgreSQL server instead of the embedded PGlite
 */
export interface Config {
  port: number;
  host: string;
  home: string;
  databaseUrl: string | undefined;
}

/** Reads the configuration. Throws an Error naming the variable when a value is malformed. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = env.PORT ? Number(env.PORT) : 3000;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT: expected an integer 0–65535, got "${env.PORT}"`);
  // A runtime data folder, not a project file: keep the bundler from tracing it.
  const home = path.resolve(/*turbopackIgnore: true*/ env.JOBDECK_HOME || path.join(os.homedir(), '.jobdeck'));
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error(`DATABASE_URL: expected postgresql://…, got "${databaseUrl.replace(/:[^:@/]*@/, ':***@')}"`);
  }
  return { port, host: env.HOST || '127.0.0.1', home, databaseUrl };
}
