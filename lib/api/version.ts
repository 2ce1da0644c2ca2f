import { readFileSync } from 'node:fs';
import path from 'node:path';

/** jobdeck's version from package.json (read once; "0.0.0" if the file cannot be read). */
export function version(): string {
  try {
    return (JSON.parse(readFileSync(path.join(process.cwd(), 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}
