/**
 * A chunk's output rows into the session's output table, in the chunk's transaction: computed
 * by the spec's SQL in PostgreSQL, or by a TypeScript transform in Node (transforms/module-fill.ts).
 */
import type pg from 'pg';
import type { PartitionRow } from '../ledger/partitions';
import { fillFromModule, type OutputTable } from '../transforms/module-fill';
import type { RunContext } from './run-context';

/** Fills the session's output table with the chunk's transformed rows; returns how many. */
export async function fillOutput(
  client: pg.PoolClient,
  ctx: RunContext,
  table: OutputTable,
  bounds: PartitionRow['bounds'],
  cursor: string | null,
  hi: string | null,
): Promise<number> {
  const { compiled, module } = ctx;
  if (!module) {
    const fill = compiled.fillFromSql(bounds, cursor, hi);
    return (await client.query(fill.text, fill.values)).rowCount ?? 0;
  }
  return fillFromModule(client, { ...ctx, module }, table, bounds, cursor, hi);
}
