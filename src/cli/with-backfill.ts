/**
 * What a command needs to operate on runs: a Backfill (api/backfill.ts) bound to the ledger
 * `--database` names, which opens the ledger pool and the Temporal connection on first use;
 * both closed when the command is done, whatever happens.
 */
import type { Client } from '@temporalio/client';
import { BackfillClient } from '../api/backfill';

/** The ledger pool and run lookup, which renderers and followers read. */
export type LedgerSession = Pick<BackfillClient, 'pool' | 'findRun'>;

export async function withBackfill<T>(databaseVar: string, fn: (backfill: BackfillClient) => Promise<T>): Promise<T> {
  const backfill = new BackfillClient(databaseVar);
  try {
    return await fn(backfill);
  } finally {
    await backfill.close();
  }
}

/** For commands the API has no verb for yet: the ledger alone. */
export function withLedger<T>(databaseVar: string, fn: (session: LedgerSession) => Promise<T>): Promise<T> {
  return withBackfill(databaseVar, fn);
}

/** …and with a Temporal client. */
export function withLedgerAndTemporal<T>(databaseVar: string, fn: (session: LedgerSession & { client: Client }) => Promise<T>): Promise<T> {
  return withBackfill(databaseVar, async (backfill) => fn({ pool: backfill.pool, findRun: backfill.findRun, client: await backfill.client() }));
}
