/**
 * Bad input from an operator — a flag, a spec, a run id, a state that does not allow the
 * action. Operations throw it; the CLI turns it into exit code 2. Its message says what
 * was wrong, where, and what to do.
 */
export class UsageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UsageError';
  }
}
