/**
 * `backfill migrate`: applies the ledger migrations to the database a variable names. Workers
 * do the same on first use when their role may; under a least-privilege role (docs/security.md)
 * the ledger's owner runs this once per release instead.
 */
import { migrateLedger } from '../../ledger/migrate';
import { openLedgerPool } from '../../operations';
import { emit, type OutputOptions } from '../output';

export async function migrateCommand(opts: OutputOptions & { database: string }): Promise<void> {
  const pool = openLedgerPool(opts.database);
  try {
    const applied = await migrateLedger(pool);
    emit(opts, { database: opts.database, applied }, (r) =>
      r.applied.length > 0 ? `Ledger in ${r.database}: applied migrations ${r.applied.join(', ')}.` : `Ledger in ${r.database} is up to date.`,
    );
  } finally {
    await pool.end();
  }
}
