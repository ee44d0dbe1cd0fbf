/**
 * The statements that check a run's work without writing: the transform recomputed (SQL, or a
 * TypeScript transform's rows as JSON or in the output table) and compared with the target,
 * `plan`'s preview of what a write would change, and the spec's invariants. Part of CompiledRun;
 * src/gates runs them.
 */
import type { Statement } from './compiled-run';
import { params } from './partition-predicate';
import { stripTrailingSemicolons, type RunSql } from './run-sql';
import type { CompiledRun } from './compiled-run';
import { targetPartitionScope } from './target-join';
import type { PartitionBounds } from '../domain/types';

type CheckStatements = Pick<CompiledRun, 'compareFromSql' | 'previewFromSql' | 'previewFromJson' | 'compareFromJson' | 'compareFromOutputTable' | 'invariant'>;

export function checkStatements(r: RunSql): CheckStatements {
  const { spec, shape, src, where, target, out, cols, keyCols, join, joinWithin, changed, keyText, transformSql, chunkPredicate, partitionScope } = r;
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
  };
}
