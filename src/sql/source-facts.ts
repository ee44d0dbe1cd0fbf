/**
 * Reads the facts the planner needs from the source (min/max of the partition column,
 * distinct values, whether NULLs occur), within the spec's `where` scope. One query per plan.
 */
import type pg from 'pg';
import { MAX_PARTITIONS } from '../shared/limits';
import type { SourceFacts } from '../planner/partitions';
import type { Spec } from '../specs/schema';
import { quoteIdent, quoteTable } from '../db/sql';
import { querySingle } from './session';

export async function readSourceFacts(db: pg.Pool | pg.PoolClient, spec: Spec): Promise<SourceFacts> {
  const src = quoteTable(spec.source.table);
  const col = quoteIdent(spec.partition.column);
  const where = spec.source.where ? `WHERE (${spec.source.where}\n)` : '';
  const nulls = `EXISTS (SELECT 1 FROM ${src} s ${where ? `${where} AND` : 'WHERE'} s.${col} IS NULL)`;
  switch (spec.partition.by) {
    case 'range': {
      const { rows } = await querySingle<{ min: string | null; max: string | null; has_nulls: boolean }>(
        db,
        `SELECT min(s.${col})::text AS min, max(s.${col})::text AS max, ${nulls} AS has_nulls FROM ${src} s ${where}`,
      );
      return { kind: 'range', min: rows[0].min, max: rows[0].max, hasNulls: rows[0].has_nulls };
    }
    case 'time': {
      const { rows } = await querySingle<{ min: Date | null; max: Date | null; has_nulls: boolean }>(
        db,
        `SELECT min(s.${col})::timestamptz AS min, max(s.${col})::timestamptz AS max, ${nulls} AS has_nulls FROM ${src} s ${where}`,
      );
      return { kind: 'time', min: rows[0].min?.toISOString() ?? null, max: rows[0].max?.toISOString() ?? null, hasNulls: rows[0].has_nulls };
    }
    case 'list': {
      if (spec.partition.values) return { kind: 'list', values: spec.partition.values.map(String), hasNulls: false };
      const { rows } = await querySingle<{ v: string }>(
        db,
        `SELECT DISTINCT s.${col}::text AS v FROM ${src} s ${where ? `${where} AND` : 'WHERE'} s.${col} IS NOT NULL ORDER BY 1 LIMIT ${MAX_PARTITIONS + 1}`, // one more than a plan may hold: enough to refuse, never unbounded
      );
      const { rows: n } = await querySingle<{ has_nulls: boolean }>(db, `SELECT ${nulls} AS has_nulls`);
      return { kind: 'list', values: rows.map((r) => r.v), hasNulls: n[0].has_nulls };
    }
  }
}
