/**
 * A destructive command asks before it acts (`revert`, `cancel`): on a terminal, a question
 * answered y or yes; `--yes` answers for a script. Without a terminal and without `--yes` it
 * refuses (exit 2) rather than act unasked; a "no" aborts (exit 130). Nothing is done before.
 */
import { createInterface } from 'node:readline/promises';
import { UsageError } from '../domain/usage-error';

/** The operator said no: nothing was done. */
export class Declined extends Error {
  constructor(what: string) {
    super(`${what}: not confirmed; nothing was done`);
    this.name = 'Declined';
  }
}

export async function confirm(what: string, question: string, options: { yes?: boolean }): Promise<void> {
  if (options.yes) return;
  if (!process.stdin.isTTY) {
    throw new UsageError(`${what} asks for confirmation, and standard input is not a terminal: add --yes to confirm it in a script (nothing was done)`);
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = (await rl.question(`${question} [y/N] `)).trim().toLowerCase();
    if (answer !== 'y' && answer !== 'yes') throw new Declined(what);
  } finally {
    rl.close();
  }
}
