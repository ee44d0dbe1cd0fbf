/**
 * The statements that write a chunk's output to the target and check it before the commit:
 * the write (MERGE, UPDATE, or replace mode's DELETE then MERGE), reconciliation, update mode's
 * skipped rows, and replace mode's refusal of rows outside their partition. Part of CompiledRun.
 */
import { quoteIdent } from '../db/sql';
import { params } from './partition-predicate';
import type { RunSql } from './run-sql';
import type { CompiledRun } from './compiled-run';
import { targetPartitionScope } from './target-join';

type WriteStatements = Pick<CompiledRun, 'write' | 'reconcile' | 'countAbsent' | 'outsidePartition'>;

/** Without triggers or rules on the target, chunks reconcile one row in this many (a power of two). */
export const RECONCILE_SAMPLE = 16;

export function writeStatements(r: RunSql): WriteStatements {
  const { spec, shape, target, out, cols, keyCols, valueCols, join, joinInRange, changed, keyText } = r;
  return {
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
    countAbsent() {
      return { text: `SELECT count(*) AS n FROM ${out} o WHERE NOT EXISTS (SELECT 1 FROM ${target} t WHERE ${join})`, values: [] };
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
  };
}
