/**
 * Declared distribution checks (spec `validate.distributions`): a target column's shape — NULL
 * share, distinct count, mean, p10/p50/p90 and a histogram — captured over the whole target
 * table before the run writes and at its end. A change beyond a declared tolerance fails the
 * gate. Captures are aggregates, kept in backfill.distributions for the report; what travels
 * through Temporal says only how far a measure moved.
 */
import type pg from 'pg';
import { quoteIdent, quoteTable } from '../db/sql';
import type { DistributionCheck } from '../specs/validate-schema';
import { readOnly } from './compare';

export const HISTOGRAM_BUCKETS = 10;

export interface Capture {
  column: string;
  rows: number;
  nulls: number;
  distinct: number;
  mean: number | null;
  /** p10, p50, p90; null for non-numeric columns. */
  quantiles: number[] | null;
  min: number | null;
  max: number | null;
  /** Below the range, HISTOGRAM_BUCKETS equal buckets, above it; null for non-numeric columns. */
  histogram: { lo: number; hi: number; counts: number[] } | null;
}

export async function captureColumn(
  pool: pg.Pool,
  table: string,
  column: string,
  range: { lo: number; hi: number } | null,
  timeoutMs: number,
): Promise<Capture> {
  return readOnly(pool, timeoutMs, async (client) => {
    const { rows: kind } = await client.query<{ numeric: boolean }>(
      `SELECT t.typcategory = 'N' AS numeric FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
        WHERE a.attrelid = $1::regclass AND a.attname = $2 AND NOT a.attisdropped`,
      [quoteTable(table), column],
    );
    if (kind.length === 0) throw new Error(`target ${table} has no column ${column} (validate.distributions)`);
    const c = quoteIdent(column);
    const t = quoteTable(table);
    const numeric = kind[0].numeric;
    const { rows } = await client.query(
      `SELECT count(*) AS rows, count(*) FILTER (WHERE ${c} IS NULL) AS nulls, count(DISTINCT ${c}) AS distinct` +
        (numeric
          ? `, avg(${c})::float8 AS mean, percentile_cont(ARRAY[0.1, 0.5, 0.9]) WITHIN GROUP (ORDER BY ${c}::float8) AS quantiles, min(${c})::float8 AS min, max(${c})::float8 AS max`
          : '') +
        ` FROM ${t}`,
    );
    const r = rows[0];
    const capture: Capture = {
      column,
      rows: Number(r.rows),
      nulls: Number(r.nulls),
      distinct: Number(r.distinct),
      mean: r.mean ?? null,
      quantiles: r.quantiles ?? null,
      min: r.min ?? null,
      max: r.max ?? null,
      histogram: null,
    };
    const span = range ?? (capture.min !== null && capture.max !== null ? { lo: capture.min, hi: capture.max } : null);
    if (numeric && span) {
      const hi = span.hi > span.lo ? span.hi : span.lo + 1;
      const { rows: buckets } = await client.query<{ b: number; n: string }>(
        `SELECT width_bucket(${c}::float8, $1, $2, ${HISTOGRAM_BUCKETS}) AS b, count(*) AS n FROM ${t} WHERE ${c} IS NOT NULL GROUP BY 1`,
        [span.lo, hi],
      );
      const counts = new Array<number>(HISTOGRAM_BUCKETS + 2).fill(0);
      for (const b of buckets) counts[b.b] += Number(b.n);
      capture.histogram = { lo: span.lo, hi, counts };
    }
    return capture;
  });
}

const pct = (x: number) => `${+(x * 100).toFixed(2)} %`;

function relative(before: number, after: number): number {
  if (before === after) return 0;
  return before === 0 ? Infinity : Math.abs(after - before) / Math.abs(before);
}

/** How far each declared measure moved beyond its tolerance; empty when within all of them. Names changes, never values. */
export function driftProblems(check: DistributionCheck, before: Capture, after: Capture): string[] {
  if (before.rows === 0) return []; // no baseline: the target was empty before the run
  const problems: string[] = [];
  if (check.nullRate !== undefined) {
    const moved = Math.abs(after.nulls / Math.max(1, after.rows) - before.nulls / before.rows);
    if (moved > check.nullRate) problems.push(`NULL share moved by ${pct(moved)} (tolerance ${pct(check.nullRate)})`);
  }
  if (check.distinct !== undefined) {
    const moved = relative(before.distinct, after.distinct);
    if (moved > check.distinct) problems.push(`distinct count moved by ${pct(moved)} (tolerance ${pct(check.distinct)})`);
  }
  if (check.mean !== undefined && before.mean !== null && after.mean !== null) {
    const moved = relative(before.mean, after.mean);
    if (moved > check.mean) problems.push(`mean moved by ${pct(moved)} (tolerance ${pct(check.mean)})`);
  }
  if (check.quantiles !== undefined && before.quantiles && after.quantiles) {
    ['p10', 'p50', 'p90'].forEach((name, i) => {
      const moved = relative(before.quantiles![i], after.quantiles![i]);
      if (moved > check.quantiles!) problems.push(`${name} moved by ${pct(moved)} (tolerance ${pct(check.quantiles!)})`);
    });
  }
  return problems;
}
