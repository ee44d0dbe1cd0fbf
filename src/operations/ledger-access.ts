/**
 * How operations reach a run's ledger: the database named by an environment variable
 * (`--database`, DATABASE_URL by default), and a run by its id or workflow id. Unknown
 * runs are usage errors that say where we looked.
 */
import type pg from 'pg';
import { createPool, databaseUrlFrom } from '../db/pool';
import { getRun, ledgerExists, type RunRow } from '../ledger/runs';
import { UsageError } from '../domain/usage-error';

export function openLedgerPool(databaseVar = 'DATABASE_URL'): pg.Pool {
  // no spec here: the ledger's database is the one --database names
  if (!process.env[databaseVar])
    throw new UsageError(
      `environment variable ${databaseVar} is not set: the ledger is read from the database whose URL --database names (default DATABASE_URL); export it, or pass --database with the variable your spec names`,
    );
  return createPool(databaseUrlFrom(databaseVar), { max: 2, applicationName: 'backfill-cli' });
}

/** `ref` is a run id or a run workflow id (`backfill/<name>/<runId>`). */
export async function findRun(pool: pg.Pool, ref: string, databaseVar: string): Promise<RunRow> {
  if (!(await ledgerExists(pool))) {
    throw new UsageError(`unknown run ${ref}: the database in ${databaseVar} has no backfill ledger; pass --database with the variable your spec names`);
  }
  const runId = ref.startsWith('backfill/') ? ref.split('/')[2] : ref;
  const run = runId ? await getRun(pool, runId) : undefined;
  if (!run) throw new UsageError(`unknown run ${ref} in the ledger of ${databaseVar}; list runs with: backfill list`);
  return run;
}

/** A ledger pool for the length of `fn`, ended whatever happens. */
export async function withLedgerPool<T>(databaseVar: string, fn: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = openLedgerPool(databaseVar);
  try {
    return await fn(pool);
  } finally {
    await pool.end();
  }
}
