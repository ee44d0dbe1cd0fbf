/**
 * The session-private table a chunk's output rows go to before the write: one per target
 * shape per session, named stably so a pooled session reuses it.
 */
import { fnv1a } from '../domain/ids';
import type { ResolvedSpec } from '../specs/resolve';
import type { RunShape } from './shape';

export function outputTableName(spec: ResolvedSpec, shape: RunShape): string {
  return `backfill_out_${fnv1a(`${spec.target.table}|${shape.outputColumns.join(',')}`)}`;
}

/**
 * Whether the output table's columns may be filled from COPY text (`ok`): true when no column
 * is, under its domains, json or jsonb (json_populate_recordset quotes a string for those), an
 * array or a composite (it builds those from JSON arrays and objects), so each takes a JSON
 * scalar's text exactly as its input function takes a COPY field.
 */
export function outputTakesCopy(table: string, columns: readonly string[]): { text: string; values: unknown[] } {
  return {
    text: `WITH RECURSIVE col(attnum, typ) AS (
             SELECT a.attnum, a.atttypid FROM pg_attribute a
              WHERE a.attrelid = $1::regclass AND a.attname = ANY($2::text[]) AND a.attnum > 0 AND NOT a.attisdropped
             UNION ALL
             SELECT col.attnum, t.typbasetype FROM col JOIN pg_type t ON t.oid = col.typ WHERE t.typtype = 'd')
           SELECT count(DISTINCT col.attnum) = cardinality($2::text[])
                  AND coalesce(bool_and(t.typtype IN ('b', 'e', 'r', 'm') AND t.typelem = 0 AND t.oid NOT IN ('json'::regtype, 'jsonb'::regtype)), false) AS ok
             FROM col JOIN pg_type t ON t.oid = col.typ WHERE t.typtype <> 'd'`,
    values: [table, columns],
  };
}
