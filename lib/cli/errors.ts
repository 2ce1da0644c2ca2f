import { EXIT } from './exit-codes';

/**
 * An error the CLI reports to the user as `error: <message>` (plus optional detail lines) and
 * exits with `exitCode` (a code from lib/cli/exit-codes.ts). Anything else thrown is a bug and
 * exits INTERNAL with its message.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    /** Extra lines printed under the message (e.g. spec issues, matching jobs). */
    readonly details: string[] = [],
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Bad usage or input (exit USAGE). */
export const usageError = (message: string, details?: string[]) => new CliError(message, EXIT.USAGE, details);
/** No such job / task / attempt (exit NOT_FOUND). */
export const notFoundError = (message: string) => new CliError(message, EXIT.NOT_FOUND);
