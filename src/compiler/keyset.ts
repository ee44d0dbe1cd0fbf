/**
 * How chunks walk a partition: the columns they are ordered by (the key's, after the partition
 * column's where the run's shape says so — see RunShape.chunkOrder), the cursor's form (the one
 * column's text, or a JSON array of the values' text), the key range (cursor, hi] as SQL, and
 * the statement that finds where the next chunk ends. Pure, like the rest of the compiler.
 */
import { quoteIdent } from '../db/sql';
import type { ResolvedSpec } from '../specs/resolve';
import type { PartitionBounds } from '../domain/types';
import type { Param } from './partition-predicate';
import type { RunShape } from './shape';

/** One column of the order a chunk walks: its name, quoted SQL and type (for casting cursor values). */
interface WalkColumn {
  name: string;
  sql: string;
  type: string;
}

export interface KeysetWalk {
  /** The key range (cursor, hi] of alias's rows: predicates to AND with the partition's. */
  range(bounds: PartitionBounds, cursor: string | null, hi: string | null, alias: string, param: Param): string[];
  /** The walk's ORDER BY list for alias. */
  orderBy(bounds: PartitionBounds, alias: string): string;
  /**
   * Count and last cursor (`n`, `hi`) of the next `lim` rows of `src s` matching `predicate`.
   * `likelyLast`: fewer than `lim` rows are expected to be left, and the statement is shaped for
   * that case; both shapes answer the same.
   */
  nextChunk(bounds: PartitionBounds, src: string, predicate: string, lim: string, likelyLast?: boolean): string;
  /** What a chunk's range is over, as an operator reads it: `id`, `(created_at, id)`. */
  columnsText(bounds: PartitionBounds | undefined): string;
  /** The range walks one column, which is the partition's own: its first chunk starts at the partition's bound. */
  walksPartitionColumnAlone(bounds: PartitionBounds | undefined): boolean;
}

export function keysetWalk(spec: ResolvedSpec, shape: RunShape): KeysetWalk {
  const keyTypes = shape.keyTypes ?? [shape.keyType];
  const keyWalk: WalkColumn[] = spec.source.key.map((name, i) => ({ name, sql: quoteIdent(name), type: keyTypes[i] }));
  const partitionColumn: WalkColumn = { name: spec.partition.column, sql: quoteIdent(spec.partition.column), type: shape.partitionColumnType };
  /**
   * The columns a chunk of this partition is ordered by, and its cursor holds: the key's, after
   * the partition column's where it walks that (a key column that is the partition column once).
   * A NULL partition has no column order to walk.
   */
  const walkOf = (bounds: PartitionBounds | undefined): WalkColumn[] =>
    bounds && shape.chunkOrder === 'column-key' && bounds.kind !== 'null'
      ? [partitionColumn, ...keyWalk.filter((k) => k.name !== partitionColumn.name)]
      : keyWalk;
  const list = (walk: WalkColumn[], alias: string, dir = '') => walk.map((w) => `${alias}.${w.sql}${dir}`).join(', ');

  return {
    range(bounds, cursor, hi, alias, param) {
      const walk = walkOf(bounds);
      const parts: string[] = [];
      if (walk.length > 1) {
        // the plain bound on the first column lets the planner range-scan its index; the row comparison is exact
        const edge = (at: string, cmp: '>' | '<=') => {
          const vals = parseTupleCursor(at, walk.length);
          const ps = walk.map((w, i) => param(vals[i], w.type));
          return `${alias}.${walk[0].sql} ${cmp === '>' ? '>=' : '<='} ${ps[0]} AND (${list(walk, alias)}) ${cmp} (${ps.join(', ')})`;
        };
        if (cursor !== null) parts.push(edge(cursor, '>'));
        if (hi !== null) parts.push(edge(hi, '<='));
        return parts;
      }
      // two shapes instead of `$1 IS NULL OR key > $1`, which would defeat the index range scan
      const [k] = walk;
      if (cursor !== null) parts.push(`${alias}.${k.sql} > ${param(cursor, k.type)}`);
      if (hi !== null) parts.push(`${alias}.${k.sql} <= ${param(hi, k.type)}`);
      return parts;
    },

    orderBy: (bounds, alias) => list(walkOf(bounds), alias),

    nextChunk(bounds, src, predicate, lim, likelyLast = false) {
      const walk = walkOf(bounds);
      const cs = walk.map((_, i) => `c${i}`);
      const keys = `SELECT ${walk.map((w, i) => `s.${w.sql} AS ${cs[i]}`).join(', ')} FROM ${src} s WHERE ${predicate} ORDER BY ${list(walk, 's')}`;
      // a cursor is one column's text, or a JSON array of the columns' text
      const cursorOf = (alias: string) =>
        walk.length > 1 ? `json_build_array(${cs.map((c) => `${alias}.${c}::text`).join(', ')})::text` : `${alias}.${cs[0]}::text`;
      // The common chunk is full: its last row is the lim-th, which one index scan that stops there
      // finds, with nothing kept or sorted (a third of the time of counting the rows and sorting
      // them for the last, on a composite key). Only a partition's last chunk, shorter, reaches the
      // other branches (PostgreSQL runs them only then); when nth is empty, fewer than lim rows
      // are left in this statement's snapshot, so they are all of them: counted without an order,
      // and the last found from the other end of the index (one scan fewer than counting and
      // sorting the first lim, which every one-chunk partition paid).
      const nth = `${keys} OFFSET ${lim} - 1 LIMIT 1`;
      const last = `SELECT ${walk.map((w, i) => `s.${w.sql} AS ${cs[i]}`).join(', ')} FROM ${src} s WHERE ${predicate} ORDER BY ${list(walk, 's', ' DESC')} LIMIT 1`;
      if (likelyLast) {
        // The other way round, for a chunk expected to be its partition's last (a partition of a
        // chunk or less): count what is left, up to lim, in any order the planner likes; short of
        // lim, those are all of them and the last is the first of a backward scan. The walk in
        // order that would not find a lim-th row is not made. A full chunk after all costs a
        // second scan, for nth (PostgreSQL runs only the CASE branch taken).
        // (a derived table, not a CTE: no name of the spec's filter, repeated inside, can meet it)
        return (
          `SELECT r.n, CASE WHEN r.n < ${lim} THEN (SELECT ${cursorOf('l')} FROM (${last}) l) ` +
          `ELSE (SELECT ${cursorOf('nth')} FROM (${nth}) nth) END AS hi ` +
          `FROM (SELECT count(*)::integer AS n FROM (SELECT FROM ${src} s WHERE ${predicate} LIMIT ${lim}) c) r`
        );
      }
      return (
        `WITH nth AS (${nth}) ` +
        `SELECT (CASE WHEN EXISTS (SELECT 1 FROM nth) THEN ${lim} ELSE (SELECT count(*) FROM ${src} s WHERE ${predicate}) END)::integer AS n, ` +
        `coalesce((SELECT ${cursorOf('nth')} FROM nth), (SELECT ${cursorOf('l')} FROM (${last}) l)) AS hi`
      );
    },

    columnsText(bounds) {
      const walk = walkOf(bounds);
      return walk.length === 1 ? walk[0].name : `(${walk.map((w) => w.name).join(', ')})`;
    },

    walksPartitionColumnAlone(bounds) {
      const walk = walkOf(bounds);
      return bounds?.kind === 'range' && walk.length === 1 && bounds.column === walk[0].name;
    },
  };
}

/** A cursor over several columns ((partition column, key…) or a composite key): a JSON array of the values as PostgreSQL text. */
function parseTupleCursor(cursor: string, width: number): string[] {
  const parsed: unknown = JSON.parse(cursor);
  if (!Array.isArray(parsed) || parsed.length !== width || parsed.some((v) => typeof v !== 'string')) {
    throw new Error(`not a cursor of ${width} columns: ${cursor}`);
  }
  return parsed as string[];
}

const MIN_MAX_TYPES = /^(smallint|integer|bigint|numeric|text|character varying|date|timestamp)/;

/** Types whose min() and max() exist and agree with ORDER BY (uuid has neither). */
export function hasMinMax(type: string): boolean {
  return MIN_MAX_TYPES.test(type);
}
