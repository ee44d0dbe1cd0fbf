/**
 * `migrate`: the ledger's migrations applied to the database a variable names, by a role that
 * may (its owner, when workers run as a least-privilege role: docs/security.md).
 */
import { migrateLedger } from '../ledger/migrate';
import { withLedgerPool } from './ledger-access';

/** The migrations applied now (none when the ledger was up to date). */
export function migrateLedgerOf(databaseVar: string): Promise<number[]> {
  return withLedgerPool(databaseVar, (pool) => migrateLedger(pool));
}
