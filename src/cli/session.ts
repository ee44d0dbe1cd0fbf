/**
 * What a command needs to operate on runs: the ledger pool (`--database`), and a Temporal
 * client when it talks to workflows; both closed when the command is done, whatever happens.
 */
import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { findRun, openLedgerPool } from '../operations/ledger-access';
import type { RunRow } from '../ledger/runs';
import { connectClient } from '../temporal/connect';

export interface LedgerSession {
  pool: pg.Pool;
  /** The run named on the command line, by run id or workflow id. */
  findRun(ref: string): Promise<RunRow>;
}

export async function withLedger<T>(databaseVar: string, fn: (session: LedgerSession) => Promise<T>): Promise<T> {
  const pool = openLedgerPool(databaseVar);
  try {
    return await fn({ pool, findRun: (ref) => findRun(pool, ref, databaseVar) });
  } finally {
    await pool.end();
  }
}

export async function withLedgerAndTemporal<T>(databaseVar: string, fn: (session: LedgerSession & { client: Client }) => Promise<T>): Promise<T> {
  return withLedger(databaseVar, async (session) => {
    const { client, close } = await connectClient();
    try {
      return await fn({ ...session, client });
    } finally {
      await close();
    }
  });
}
