/**
 * Builds every SQL statement a chunk runs, from the spec and the run's shape. Pure and
 * deterministic, so it is unit-tested and the same on every worker.
 *
 * A chunk is the keyset range (cursor, hi] of source.key inside one partition — or of
 * (partition column, key…) when the run's shape says so; how chunks walk, and what a cursor
 * holds, is keyset.ts. The
 * transform never sees bounds: it reads the relation `chunk`, which the engine defines
 * as a CTE over exactly those rows. Its output goes to a per-session temp table typed
 * like the target, and the write compares like with like, so a row whose stored value
 * already equals the computed one (after the target's own rounding) is never rewritten.
 */
import { quoteIdent, quoteTable } from '../db/sql';
import { boundsText, crossableEnds, params, partitionPredicate, timeBound, type Param } from './partition-predicate';
import type { PartitionBounds } from '../shared/types';
import type { ResolvedSpec } from '../specs/resolve';
import { keysetWalk } from './keyset';
import { outputTableName, outputTakesCopy } from './output-table';
import { targetJoin, targetPartitionScope, type OutputKeyRange } from './target-join';
import type { RunShape } from './shape';

export interface Statement {
  text: string;
  values: unknown[];
}

export interface CompiledRun {
  /** Creates this session's output table once; a no-op afterwards. */
  createOutputTable: string;
  outputTable: string;
  /** How many rows the next chunk holds and its last key: `n`, `hi`. */
  chunkBounds(bounds: PartitionBounds, cursor: string | null, limit: number): Statement;
  /** How many rows the partition has after the cursor (`n`), counted up to `cap`: what a split weighs. */
  rowsLeft(bounds: PartitionBounds, cursor: string | null, cap: number): Statement;
  /** SQL transform: fills the output table from the chunk. */
  fillFromSql(bounds: PartitionBounds, cursor: string | null, hi: string | null): Statement;
  /** Module transform: the chunk's rows, read for the transform in Node. */
  readChunk(bounds: PartitionBounds, cursor: string | null, hi: string | null, columns: string[] | undefined): Statement;
  /** Module transform: fills the output table from rows serialised as one JSON array. */
  fillFromJson(rowsJson: string): Statement;
  /** Module transform: the same fill from COPY text (transforms/copy-text.ts says when it may). */
  fillFromCopy: string;
  /** Module transform: whether the output table's columns may take COPY text (`ok`). */
  outputTakesCopy: Statement;
  /**
   * The output rows' key range (`lo`, `hi`), read once after the fill for the statements that
   * meet the target (write, reconcile, before-images); null where the target key's type has no
   * min() and max() that follow its index, and those statements take none.
   */
  outputKeyRange: string | null;
  /** Writes only what differs; rowCount = rows written. Replace mode returns two statements. */
  write(bounds: PartitionBounds, range: OutputKeyRange | null): Statement[];
  /**
   * Replace mode: output rows whose target.partitionColumn lies outside the partition that
   * computed them (`key`, `value`, `total` of a few); such a row would overwrite a row another
   * partition owns, so the chunk must not write at all.
   */
  outsidePartition(bounds: PartitionBounds): Statement;
  /**
   * Source rows in scope now that no planned partition covers (`n`): rows that arrived above
   * the last bound or below the first, list values the plan did not have, NULLs where the plan
   * had no NULL partition. The plan is contiguous, so its extent is enough.
   */
  outsidePlan(planned: PartitionBounds[]): Statement;
  /**
   * After the write, in the chunk's transaction: output rows the target does not hold as
   * computed. `missing` (no target row with the key: update mode's skipped rows), `differing`
   * (the row is there with other values), and a few of their keys.
   */
  reconcile(range: OutputKeyRange | null): Statement;
  /** Update mode: output rows whose key the target lacks (`n`), which an update cannot write. */
  countAbsent(): Statement;
  /**
   * Verification (src/validation): the SQL transform recomputed for (cursor, hi] of a partition,
   * typed like the target, compared with what the target holds.
   * `compared`, `missing` (no target row with the key), `differing`, `extra` (replace mode:
   * target rows of the partition the transform no longer produces) and a few `examples` keys.
   */
  compareFromSql(bounds: PartitionBounds, cursor: string | null, hi: string | null, types: string[]): Statement;
  /** The same comparison for a TypeScript transform's output rows, serialised as one JSON array. */
  compareFromJson(bounds: PartitionBounds, rowsJson: string, types: string[], wholePartition: boolean): Statement;
  /** The same comparison for a TypeScript transform's output rows already in the session's output table. */
  compareFromOutputTable(bounds: PartitionBounds, types: string[], wholePartition: boolean): Statement;
  /** Whether this session has its output table (`here`): a session that ran chunks of the run does. */
  outputTableHere: Statement;
  /**
   * `plan`'s preview: up to `limit` output rows of (cursor, hi] that a write would insert or
   * change, as `key`, `current` (the target row, JSON; NULL when absent) and `computed` (JSON).
   */
  previewFromSql(bounds: PartitionBounds, cursor: string | null, hi: string | null, types: string[], limit: number): Statement;
  previewFromJson(rowsJson: string, types: string[], limit: number): Statement;
  /** Invariant SQL with `source_rows` bound to a partition's source rows in scope, or the whole plan's (bounds omitted); up to `limit` violating rows as text and their count. */
  invariant(sql: string, bounds: PartitionBounds | null, limit: number): Statement;
  /** The chunk (cursor, hi] in words, for errors: `id in (10, 20]` or `(created_at, id) in (…, …]`. */
  describeRange(bounds: PartitionBounds | undefined, cursor: string | null, hi: string | null): string;
}

export function compileRun(spec: ResolvedSpec, shape: RunShape): CompiledRun {
  const src = quoteTable(spec.source.table);
  const { target, out, cols, keyCols, valueCols, join, joinWithin, joinInRange, ranged, changed, keyText } = targetJoin(spec, shape);
  // the newline ends a trailing -- comment in the filter; the filter was parsed as one expression
  const where = spec.source.where ? ` AND (${spec.source.where}\n)` : '';

  const walk = keysetWalk(spec, shape);
  const pcol = quoteIdent(spec.partition.column);

  /** The partition's rows on alias: its bounds, and the stretch of keys it holds if it was split while it ran. */
  function partitionScope(bounds: PartitionBounds, alias: string, param: Param): string[] {
    const scope = partitionPredicate(bounds, alias, shape.partitionColumnType, param, shape.keyType);
    return bounds.stretch ? [scope, ...walk.range(bounds, bounds.stretch.after, bounds.stretch.through, alias, param)] : [scope];
  }

  /** Predicate on alias `s` for the partition, then the chunk's key range; returns SQL and its values. */
  function chunkPredicate(bounds: PartitionBounds, cursor: string | null, hi: string | null, alias = 's', numbered = params()) {
    const { values, param } = numbered;
    const parts = [...partitionScope(bounds, alias, param), ...walk.range(bounds, cursor, hi, alias, param)];
    return { sql: parts.join(' AND ') + where, values, param };
  }

  const transformSql = spec.transform.sql ? stripTrailingSemicolons(spec.transform.sql) : undefined;

  /** The output rows (`output`, a SELECT typed like the target) against the target; `bounds` adds replace mode's extra rows. */
  function comparison(output: string, replaceBounds: PartitionBounds | null, numbered: ReturnType<typeof params>): Statement {
    const absent = `t.${keyCols[0]} IS NULL`;
    // update mode cannot write a row whose key the target lacks: absent is skipped there, not wrong
    const wrong = spec.target.mode === 'update' ? `NOT ${absent} AND ${changed}` : `${absent} OR ${changed}`;
    let extra = '0::bigint';
    if (replaceBounds) {
      const inPartition = targetPartitionScope(spec, shape, replaceBounds, 't', numbered.param);
      extra = `(SELECT count(*) FROM ${target} t WHERE ${inPartition} AND NOT EXISTS (SELECT 1 FROM o WHERE ${join}))`;
    }
    return {
      text:
        `WITH o AS MATERIALIZED (${output}) ` +
        `SELECT count(*) AS compared, count(*) FILTER (WHERE ${absent}) AS missing, count(*) FILTER (WHERE NOT ${absent} AND ${changed}) AS differing, ` +
        `${extra} AS extra, (array_agg(${keyText}) FILTER (WHERE ${wrong}))[1:5] AS examples ` +
        `FROM o LEFT JOIN ${target} t ON ${joinWithin('o')}`,
      values: numbered.values,
    };
  }

  /** Output rows (`output`) a write would change, current beside computed. */
  function preview(output: string, numbered: ReturnType<typeof params>, limit: number): Statement {
    const absent = `t.${keyCols[0]} IS NULL`;
    const wrong = spec.target.mode === 'update' ? `NOT ${absent} AND ${changed}` : `${absent} OR ${changed}`;
    const lim = numbered.param(limit, 'integer');
    return {
      text:
        `WITH o AS MATERIALIZED (${output}) ` +
        // every value as its text, so numerics and bigints arrive exact
        `SELECT ${keyText} AS key, CASE WHEN ${absent} THEN NULL ELSE (SELECT json_object_agg(j.key, j.value #>> '{}') FROM json_each(row_to_json(t)) j) END AS current, ` +
        `(SELECT json_object_agg(j.key, j.value #>> '{}') FROM json_each(row_to_json(o)) j) AS computed ` +
        `FROM o LEFT JOIN ${target} t ON ${joinWithin('o')} WHERE ${wrong} ORDER BY ${keyCols.map((c) => `o.${c}`).join(', ')} LIMIT ${lim}`,
      values: numbered.values,
    };
  }

  return {
    outputTable: out,
    createOutputTable:
      // ON COMMIT DELETE ROWS: each chunk starts empty without dropping the table (no catalog churn, no WAL)
      `CREATE TEMP TABLE IF NOT EXISTS ${outputTableName(spec, shape)} ON COMMIT DELETE ROWS AS ` + `SELECT ${cols.join(', ')} FROM ${target} WITH NO DATA`,

    chunkBounds(bounds, cursor, limit) {
      const p = chunkPredicate(bounds, cursor, null);
      const lim = p.param(limit, 'integer');
      return { text: walk.nextChunk(bounds, src, p.sql, lim), values: p.values };
    },

    rowsLeft(bounds, cursor, cap) {
      const p = chunkPredicate(bounds, cursor, null);
      const lim = p.param(cap, 'integer');
      return { text: `SELECT count(*)::integer AS n FROM (SELECT FROM ${src} s WHERE ${p.sql} LIMIT ${lim}) r`, values: p.values };
    },

    fillFromSql(bounds, cursor, hi) {
      if (!transformSql) throw new Error('fillFromSql needs a SQL transform');
      const p = chunkPredicate(bounds, cursor, hi);
      return {
        text:
          `WITH chunk AS (SELECT s.* FROM ${src} s WHERE ${p.sql}) ` +
          `INSERT INTO ${out} (${cols.join(', ')}) SELECT ${cols.map((c) => `t.${c}`).join(', ')} FROM (${transformSql}\n) t`,
        values: p.values,
      };
    },

    readChunk(bounds, cursor, hi, columns) {
      const p = chunkPredicate(bounds, cursor, hi);
      const list = columns && columns.length > 0 ? columns.map((c) => `s.${quoteIdent(c)}`).join(', ') : 's.*';
      return { text: `SELECT ${list} FROM ${src} s WHERE ${p.sql} ORDER BY ${walk.orderBy(bounds, 's')}`, values: p.values };
    },

    compareFromSql(bounds, cursor, hi, types) {
      if (!transformSql) throw new Error('compareFromSql needs a SQL transform');
      const numbered = params();
      const p = chunkPredicate(bounds, cursor, hi, 's', numbered);
      const typed = cols.map((c, i) => `t.${c}::${types[i]} AS ${c}`).join(', ');
      const output = `WITH chunk AS (SELECT s.* FROM ${src} s WHERE ${p.sql}) SELECT ${typed} FROM (${transformSql}\n) t`;
      // rows of the partition the transform does not produce count only when the whole partition was recomputed
      return comparison(output, spec.target.mode === 'replace' && cursor === null && hi === null ? bounds : null, numbered);
    },

    previewFromSql(bounds, cursor, hi, types, limit) {
      if (!transformSql) throw new Error('previewFromSql needs a SQL transform');
      const numbered = params();
      const p = chunkPredicate(bounds, cursor, hi, 's', numbered);
      const typed = cols.map((c, i) => `t.${c}::${types[i]} AS ${c}`).join(', ');
      return preview(`WITH chunk AS (SELECT s.* FROM ${src} s WHERE ${p.sql}) SELECT ${typed} FROM (${transformSql}\n) t`, numbered, limit);
    },

    previewFromJson(rowsJson, types, limit) {
      const numbered = params();
      const json = numbered.param(rowsJson, 'json');
      return preview(
        `SELECT ${cols.map((c, i) => `r.${c}::${types[i]} AS ${c}`).join(', ')} FROM json_populate_recordset(NULL::${target}, ${json}) r`,
        numbered,
        limit,
      );
    },

    compareFromJson(bounds, rowsJson, types, wholePartition) {
      const numbered = params();
      const json = numbered.param(rowsJson, 'json');
      const output = `SELECT ${cols.map((c, i) => `r.${c}::${types[i]} AS ${c}`).join(', ')} FROM json_populate_recordset(NULL::${target}, ${json}) r`;
      return comparison(output, spec.target.mode === 'replace' && wholePartition ? bounds : null, numbered);
    },

    compareFromOutputTable(bounds, types, wholePartition) {
      const numbered = params();
      const output = `SELECT ${cols.map((c, i) => `r.${c}::${types[i]} AS ${c}`).join(', ')} FROM ${out} r`;
      return comparison(output, spec.target.mode === 'replace' && wholePartition ? bounds : null, numbered);
    },

    outputTableHere: { text: 'SELECT to_regclass($1) IS NOT NULL AS here', values: [out] },

    invariant(sql, bounds, limit) {
      const numbered = params();
      const scope = bounds ? partitionScope(bounds, 's', numbered.param).join(' AND ') : 'true';
      const lim = numbered.param(limit, 'integer');
      // the newline ends a trailing -- comment; the text was parsed as exactly one SELECT
      return {
        text:
          `WITH source_rows AS (SELECT s.* FROM ${src} s WHERE ${scope}${where}), v AS (${stripTrailingSemicolons(sql)}\n) ` +
          `SELECT (SELECT count(*) FROM v) AS n, (SELECT array_agg(x) FROM (SELECT row_to_json(v)::text AS x FROM v LIMIT ${lim}) e) AS examples`,
        values: numbered.values,
      };
    },

    fillFromCopy: `COPY ${out} (${cols.join(', ')}) FROM STDIN`,
    outputTakesCopy: outputTakesCopy(out, shape.outputColumns),

    fillFromJson(rowsJson) {
      return {
        text: `INSERT INTO ${out} (${cols.join(', ')}) SELECT ${cols.join(', ')} FROM json_populate_recordset(NULL::${out}, $1::json)`,
        values: [rowsJson],
      };
    },

    describeRange(bounds, cursor, hi) {
      const what = walk.columnsText(bounds);
      const to = hi ?? 'end of partition';
      if (cursor !== null) return `${what} in (${cursor}, ${to}]`;
      // the upper part of a partition split while it ran starts after the key it was split at
      if (bounds?.stretch?.after) return `${what} in (${bounds.stretch.after}, ${to}]`;
      // the first chunk starts where the partition does: name that bound, not an open interval
      if (bounds?.kind === 'range' && walk.walksPartitionColumnAlone(bounds)) return `${what} in [${bounds.lo}, ${to}]`;
      // a list value is row data (this text reaches Temporal): its partition is named by id alone
      if (bounds && (bounds.kind === 'range' || bounds.kind === 'time')) return `${what} from the start of the partition (${boundsText(bounds)}) through ${to}`;
      return `${what} from the partition's first row through ${to}`;
    },

    countAbsent() {
      return { text: `SELECT count(*) AS n FROM ${out} o WHERE NOT EXISTS (SELECT 1 FROM ${target} t WHERE ${join})`, values: [] };
    },

    outputKeyRange: ranged ? `SELECT min(${keyCols[0]})::text AS lo, max(${keyCols[0]})::text AS hi FROM ${out}` : null,

    reconcile(range) {
      // without triggers or rules on the target, the write's own semantics make the target equal
      // the output; a fixed sample of keys (1 in RECONCILE_SAMPLE) then guards against a wrong
      // statement at a fraction of a second join's cost. With them, every row is compared
      const sample = shape.targetRewrites
        ? ''
        : ` WHERE (hashtextextended(${keyCols.map((c) => `o.${c}::text`).join(" || '|' || ")}, 0) & ${RECONCILE_SAMPLE - 1}) = 0`;
      const absent = `t.${keyCols[0]} IS NULL`;
      const { values, param } = params();
      return {
        text:
          `SELECT count(*) FILTER (WHERE ${absent}) AS missing, count(*) FILTER (WHERE NOT ${absent} AND ${changed}) AS differing, ` +
          `(array_agg(${keyText}) FILTER (WHERE NOT ${absent} AND ${changed}))[1:5] AS examples ` +
          `FROM ${out} o LEFT JOIN ${target} t ON ${joinInRange(range, param)}${sample}`,
        values,
      };
    },

    outsidePlan(planned) {
      const { values, param } = params();
      // listed values are the scope itself: other values are outside it on purpose
      if (spec.partition.by === 'list' && spec.partition.values) return { text: 'SELECT 0::bigint AS n', values: [] };
      const col = `s.${pcol}`;
      const bounded = planned.filter((b) => b.kind !== 'null');
      const hasNull = planned.some((b) => b.kind === 'null');
      const outside: string[] = hasNull ? [] : [`${col} IS NULL`];
      if (bounded.length === 0) {
        outside.push(`${col} IS NOT NULL`);
      } else if (bounded[0].kind === 'leaf') {
        // the pieces of a cut leaf cover it whole: its constraint once
        const within = [...new Set(bounded.map((b) => (b.kind === 'leaf' ? `(${b.constraint})` : 'false')))].join(' OR ');
        return { text: `SELECT count(*) AS n FROM ${src} s WHERE NOT (${within})${where}`, values: [] };
      } else if (bounded[0].kind === 'span') {
        // open at both ends: every value has a partition
      } else if (bounded[0].kind === 'list') {
        outside.push(
          `${col}::text <> ALL (${param(
            bounded.map((b) => (b.kind === 'list' ? b.value : '')),
            'text[]',
          )})`,
        );
      } else {
        const first = bounded[0] as Extract<PartitionBounds, { lo: string }>;
        const last = bounded[bounded.length - 1] as Extract<PartitionBounds, { hi: string }>;
        if (first.kind === 'time') {
          outside.push(`${col} < ${timeBound(first, first.lo, shape.partitionColumnType, param)}`);
          outside.push(`${col} >= ${timeBound(first, last.hi, shape.partitionColumnType, param)}`);
        } else {
          const ends = crossableEnds(shape.partitionColumnType, first.lo, last.hi);
          if (ends.lo) outside.push(`${col} < ${param(first.lo, shape.partitionColumnType)}`);
          if (ends.hi) outside.push(`${col} >= ${param(last.hi, shape.partitionColumnType)}`);
        }
      }
      if (outside.length === 0) return { text: 'SELECT 0::bigint AS n', values: [] };
      const filter = spec.source.where ? ` AND (${spec.source.where}\n)` : '';
      return { text: `SELECT count(*) AS n FROM ${src} s WHERE (${outside.join(' OR ')})${filter}`, values };
    },

    outsidePartition(bounds) {
      const { values, param } = params();
      const pcol = spec.target.partitionColumn!;
      const inPartition = targetPartitionScope(spec, shape, bounds, 'o', param);
      return {
        text: `SELECT ${keyText} AS key, o.${quoteIdent(pcol)}::text AS value, count(*) OVER () AS total FROM ${out} o WHERE (${inPartition}) IS NOT TRUE LIMIT 5`,
        values,
      };
    },

    write(bounds, range) {
      const keys = params();
      const on = joinInRange(range, keys.param);
      const set = valueCols.map((c) => `${c} = o.${c}`).join(', ');
      const merge =
        `MERGE INTO ${target} t USING ${out} o ON ${on} ` +
        // the IS DISTINCT FROM guard: an equal row is matched but not touched (no new tuple, no WAL)
        (valueCols.length > 0 ? `WHEN MATCHED AND ${changed} THEN UPDATE SET ${set} ` : '') +
        `WHEN NOT MATCHED THEN INSERT (${cols.join(', ')}) VALUES (${cols.map((c) => `o.${c}`).join(', ')})`;
      switch (spec.target.mode) {
        case 'upsert':
          return [{ text: merge, values: keys.values }];
        case 'update':
          if (valueCols.length === 0) return [];
          return [{ text: `UPDATE ${target} t SET ${set} FROM ${out} o WHERE ${on} AND ${changed}`, values: keys.values }];
        case 'replace': {
          // rows of this partition that the transform no longer produces go; the rest is merged
          const { values, param } = params();
          const inPartition = targetPartitionScope(spec, shape, bounds, 't', param);
          const del = `DELETE FROM ${target} t WHERE ${inPartition} ` + `AND NOT EXISTS (SELECT 1 FROM ${out} o WHERE ${join})`;
          return [
            { text: del, values },
            { text: merge, values: keys.values },
          ];
        }
      }
    },
  };
}

/** Without triggers or rules on the target, chunks reconcile one row in this many (a power of two). */
export const RECONCILE_SAMPLE = 16;

export function stripTrailingSemicolons(sql: string): string {
  return sql.replace(/[\s;]+$/, '');
}
