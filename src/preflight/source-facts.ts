/**
 * Reads the facts the planner needs from the source (min/max of the partition column,
 * distinct values, whether NULLs occur), within the spec's `where` scope. One query per plan.
 */
import type pg from 'pg';
import { MAX_PARTITIONS } from '../domain/limits';
import { PlanError, type SourceFacts } from '../compiler/plan-partitions';
import type { ResolvedSpec } from '../specs/resolve';
import { quoteIdent, quoteTable } from '../db/sql';
import { querySingle } from '../db/session';
import { partitionTree } from './table-info';

export async function readSourceFacts(db: pg.PoolClient, spec: ResolvedSpec, columnType: string): Promise<SourceFacts> {
  const src = quoteTable(spec.source.table);
  const col = quoteIdent(spec.partition.column);
  const where = spec.source.where ? `WHERE (${spec.source.where}\n)` : '';
  const nulls = `EXISTS (SELECT 1 FROM ${src} s ${where ? `${where} AND` : 'WHERE'} s.${col} IS NULL)`;
  switch (spec.partition.by) {
    case 'range': {
      if (spec.partition.count !== undefined) return quantileFacts(db, spec, nulls);
      const { rows } = await querySingle<{ min: string | null; max: string | null; has_nulls: boolean }>(
        db,
        `SELECT min(s.${col})::text AS min, max(s.${col})::text AS max, ${nulls} AS has_nulls FROM ${src} s ${where}`,
      );
      return { kind: 'range', min: rows[0].min, max: rows[0].max, hasNulls: rows[0].has_nulls };
    }
    case 'time': {
      // a date or timestamp in a named zone's calendar is that zone's local time (as partition predicates read it)
      const zone = spec.partition.timeZone;
      const zoned = zone && !/^timestamp(\(\d+\))? with time zone/.test(columnType);
      const instant = (v: string) => (zoned ? `(${v}::timestamp AT TIME ZONE $1)` : `${v}::timestamptz`);
      const { rows } = await querySingle<{ min: Date | null; max: Date | null; has_nulls: boolean; infinite: boolean }>(
        db,
        // 'infinity' sorts after every timestamp and '-infinity' before: the extremes tell whether
        // any row holds one, and min() and max() alone read two ends of the column's index, where
        // any other aggregate would scan the whole source (twice per start, on the biggest tables)
        `SELECT ${instant('m.lo')} AS min, ${instant('m.hi')} AS max, ${nulls} AS has_nulls,
                coalesce(NOT isfinite(m.lo) OR NOT isfinite(m.hi), false) AS infinite
           FROM (SELECT min(s.${col}) AS lo, max(s.${col}) AS hi FROM ${src} s ${where}) m`,
        zoned ? [zone] : [],
      );
      if (rows[0].infinite) {
        // 'infinity' has no place on a calendar: no time partition could hold it
        throw new PlanError(
          'partition.column',
          `${spec.partition.column} holds 'infinity' or '-infinity' in scope, which no time partition can hold; exclude them with source.where (isfinite(${spec.partition.column})), or partition by another column`,
        );
      }
      return { kind: 'time', min: rows[0].min?.toISOString() ?? null, max: rows[0].max?.toISOString() ?? null, hasNulls: rows[0].has_nulls };
    }
    case 'native': {
      // every leaf under the source, any depth, with the constraint that routes rows to it;
      // a lone default partition has no constraint: it holds every row
      const leaves = (await partitionTree(db, spec.source.table)).filter((p) => p.leaf);
      const rows = spec.partition.rows;
      if (rows === undefined) return { kind: 'leaves', leaves: leaves.map((l) => ({ name: l.name, constraint: l.constraint ?? 'true' })) };
      const splitColumn = spec.source.key[0];
      const cut = [];
      for (const l of leaves) cut.push({ name: l.name, constraint: l.constraint ?? 'true', cuts: await leafCuts(db, spec, l.name, splitColumn, rows) });
      return { kind: 'leaves', leaves: cut, splitColumn };
    }
    case 'list': {
      if (spec.partition.values) return { kind: 'list', values: await canonicalValues(db, spec, columnType), hasNulls: false };
      const { rows } = await querySingle<{ v: string }>(
        db,
        `SELECT DISTINCT s.${col}::text AS v FROM ${src} s ${where ? `${where} AND` : 'WHERE'} s.${col} IS NOT NULL ORDER BY 1 LIMIT ${MAX_PARTITIONS + 1}`, // one more than a plan may hold: enough to refuse, never unbounded
      );
      const { rows: n } = await querySingle<{ has_nulls: boolean }>(db, `SELECT ${nulls} AS has_nulls`);
      return { kind: 'list', values: rows.map((r) => r.v), hasNulls: n[0].has_nulls };
    }
  }
}

/**
 * Listed values as the column's type spells them: "01" and "1" are one integer, so they would
 * plan two partitions over the same rows; a value the type cannot hold would match no row.
 */
async function canonicalValues(db: pg.PoolClient, spec: ResolvedSpec, columnType: string): Promise<string[]> {
  const given = spec.partition.by === 'list' ? (spec.partition.values ?? []).map(String) : [];
  // the type comes from the catalog (format_type), never from the spec
  const cast = (param: string) => `(${param}::text)::${columnType}::text`;
  let canonical: string[];
  await db.query('SAVEPOINT list_values');
  try {
    const { rows } = await querySingle<{ v: string }>(db, `SELECT ${cast('g.v')} AS v FROM unnest($1::text[]) WITH ORDINALITY AS g(v, i) ORDER BY g.i`, [
      given,
    ]);
    canonical = rows.map((r) => r.v);
    await db.query('RELEASE SAVEPOINT list_values');
  } catch {
    await db.query('ROLLBACK TO SAVEPOINT list_values');
    // find the first value the type refuses, to name it
    for (const [i, value] of given.entries()) {
      await db.query('SAVEPOINT list_value');
      try {
        await querySingle(db, `SELECT ${cast('$1')}`, [value]);
        await db.query('RELEASE SAVEPOINT list_value');
      } catch (err) {
        await db.query('ROLLBACK TO SAVEPOINT list_value');
        throw new PlanError(
          `partition.values.${i}`,
          `is ${JSON.stringify(value)}, which is not a valid ${columnType} (${(err as Error).message}); list values of ${spec.partition.column}'s type`,
        );
      }
    }
    throw new Error('a listed value failed its cast, then every value passed it');
  }
  const spelledAs = new Map<string, string>();
  for (const [i, text] of canonical.entries()) {
    const earlier = spelledAs.get(text);
    if (earlier !== undefined && earlier !== given[i]) {
      throw new PlanError(
        `partition.values.${i}`,
        `is ${JSON.stringify(given[i])}, the same ${columnType} as ${JSON.stringify(earlier)}: both would plan a partition over the same rows; list each value once`,
      );
    }
    spelledAs.set(text, given[i]);
  }
  return canonical;
}

/** Above this many rows the quantiles come from a repeatable sample of about this many. */
const SAMPLE_ROWS = 200_000;

/**
 * The partition column's quantiles at 1/count … (count-1)/count, for ranges of about equal
 * rows. A big table is read through a repeatable page sample (TABLESAMPLE SYSTEM … REPEATABLE),
 * so planning it again over the same data cuts the same ranges and reads a few hundred
 * thousand rows, not the table.
 */
async function quantileFacts(db: pg.PoolClient, spec: ResolvedSpec, nulls: string): Promise<SourceFacts> {
  const count = spec.partition.by === 'range' ? spec.partition.count! : 1;
  const src = quoteTable(spec.source.table);
  const col = quoteIdent(spec.partition.column);
  const { rows: est } = await db.query<{ n: number }>('SELECT greatest(reltuples, 0)::float8 AS n FROM pg_class WHERE oid = to_regclass($1)', [src]);
  const tableRows = Number(est[0]?.n ?? 0);
  const sample = tableRows > SAMPLE_ROWS ? ` TABLESAMPLE SYSTEM (${Math.min(100, (100 * SAMPLE_ROWS) / tableRows).toFixed(6)}) REPEATABLE (0)` : '';
  const filter = spec.source.where ? ` AND (${spec.source.where}\n)` : '';
  const fractions = Array.from({ length: count - 1 }, (_, i) => (i + 1) / count);
  const { rows } = await querySingle<{ cuts: string[] | null; has_nulls: boolean }>(
    db,
    `SELECT (SELECT (percentile_disc($1::float8[]) WITHIN GROUP (ORDER BY s.${col}))::text[] FROM ${src} s${sample} WHERE s.${col} IS NOT NULL${filter}) AS cuts, ${nulls} AS has_nulls`,
    [fractions],
  );
  return { kind: 'quantiles', cuts: count > 1 ? (rows[0].cuts ?? []) : [], hasNulls: rows[0].has_nulls };
}

/**
 * Where to cut one leaf into pieces of about `rows` rows in scope: quantiles of the key's first
 * column, read from the leaf alone (through the same repeatable sample as range counts when it
 * is big). A leaf the statistics put at `rows` or fewer is not read; nor is a foreign leaf,
 * which cannot be sampled and stays whole.
 */
async function leafCuts(db: pg.PoolClient, spec: ResolvedSpec, leaf: string, column: string, rows: number): Promise<string[]> {
  const { rows: stats } = await db.query<{ n: number; kind: string }>(
    'SELECT reltuples::float8 AS n, relkind::text AS kind FROM pg_class WHERE oid = to_regclass($1)',
    [leaf],
  );
  const estimated = Number(stats[0]?.n ?? 0);
  // reltuples is -1 until the leaf is first analyzed: then it is counted
  if (stats[0]?.kind !== 'r' || (estimated >= 0 && estimated <= rows)) return [];
  const col = quoteIdent(column);
  const fraction = estimated > SAMPLE_ROWS ? Math.min(1, SAMPLE_ROWS / estimated) : 1;
  const sample = fraction < 1 ? ` TABLESAMPLE SYSTEM (${(100 * fraction).toFixed(6)}) REPEATABLE (0)` : '';
  const filter = spec.source.where ? `WHERE (${spec.source.where}\n)` : '';
  const from = `FROM ${leaf} s${sample} ${filter}`;
  const { rows: counted } = await querySingle<{ n: string }>(db, `SELECT count(*) AS n ${from}`);
  const pieces = Math.ceil(Number(counted[0].n) / fraction / rows);
  if (pieces <= 1) return [];
  const fractions = Array.from({ length: pieces - 1 }, (_, i) => (i + 1) / pieces);
  const { rows: quantiles } = await querySingle<{ cuts: string[] | null }>(
    db,
    `SELECT (percentile_disc($1::float8[]) WITHIN GROUP (ORDER BY s.${col}))::text[] AS cuts ${from}`,
    [fractions],
  );
  return quantiles[0].cuts ?? [];
}
