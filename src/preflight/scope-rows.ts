/**
 * How many source rows a spec's scope holds: counted when the planner expects at most
 * EXACT_COUNT_MAX_ROWS and the count finishes within its time limit, else the planner's
 * estimate, marked as such. Read-only. Used by `plan` and by registration (progress is
 * measured in rows against this number).
 */
import type pg from 'pg';
import { quoteTable } from '../db/sql';
import type { ResolvedSpec } from '../specs/resolve';
import { inReadOnlyCheck } from '../db/session';

export const EXACT_COUNT_MAX_ROWS = 5_000_000;
const COUNT_TIMEOUT_MS = 20_000;

export interface ScopeRows {
  rows: number;
  exact: boolean;
}

export async function scopeRows(pool: pg.Pool, spec: Pick<ResolvedSpec, 'source'>): Promise<ScopeRows> {
  const from = `${quoteTable(spec.source.table)} s${spec.source.where ? ` WHERE (${spec.source.where}\n)` : ''}`;
  const estimate = await inReadOnlyCheck(pool, async (client) => {
    const { rows } = await client.query<{ 'QUERY PLAN': { Plan: { 'Plan Rows': number } }[] }>(`EXPLAIN (FORMAT JSON) SELECT 1 FROM ${from}`);
    return Math.round(rows[0]['QUERY PLAN'][0].Plan['Plan Rows']);
  });
  if (estimate > EXACT_COUNT_MAX_ROWS) return { rows: estimate, exact: false };
  try {
    const counted = await inReadOnlyCheck(
      pool,
      async (client) => {
        // one backend, like a chunk: parallel workers would take cores from the application for
        // a number that serves progress only, and on a small server their start costs more than
        // they save (2M keys, 2 cores: 0.23-0.45 s parallel, 0.14 s without; bench/RESULTS.md)
        await client.query('SET LOCAL max_parallel_workers_per_gather = 0');
        return Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${from}`)).rows[0].n);
      },
      COUNT_TIMEOUT_MS,
    );
    return { rows: counted, exact: true };
  } catch (err) {
    // a count that cannot finish in time falls back to the estimate; anything else is a real problem
    if ((err as { code?: string }).code !== '57014') throw err;
    return { rows: estimate, exact: false };
  }
}
