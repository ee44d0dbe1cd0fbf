/**
 * A server that did not answer — Temporal or a database not reachable from here — as opposed to
 * an answer of "no". Operations throw it where they know a connection failed; the CLI turns it
 * (and any error whose cause is a lost or refused connection) into exit code 3, so a script can
 * tell "could not answer" from "failed" (1) and "bad input" (2).
 */
export class UnreachableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UnreachableError';
  }
}
