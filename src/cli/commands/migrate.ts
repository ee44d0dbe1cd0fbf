/**
 * `backfill migrate`: applies the ledger migrations to the database a variable names. Workers
 * do the same on first use when their role may; under a least-privilege role (docs/security.md)
 * the ledger's owner runs this once per release instead.
 */
import { Command } from 'commander';
import { migrateLedgerOf } from '../../operations/migrate-ledger';
import { emit, type OutputOptions } from '../output';
import { databaseOption, outputOption } from '../options';

async function migrate(opts: OutputOptions & { database: string }): Promise<void> {
  const applied = await migrateLedgerOf(opts.database);
  emit(opts, { database: opts.database, applied }, (r) =>
    r.applied.length > 0 ? `Ledger in ${r.database}: applied migrations ${r.applied.join(', ')}.` : `Ledger in ${r.database} is up to date.`,
  );
}

export function command(): Command {
  return new Command('migrate')
    .description(
      "create or update the backfill ledger (schema backfill) in a database; run it as the ledger's owner when workers run as a least-privilege role",
    )
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(migrate);
}
