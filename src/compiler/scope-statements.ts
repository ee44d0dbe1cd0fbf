/**
 * The plan's scope, looked at again at the end of a run: source rows in scope now that no
 * planned partition covers. Part of CompiledRun.
 */
import { crossableEnds, params, timeBound } from './partition-predicate';
import type { RunSql } from './run-sql';
import type { CompiledRun } from './compiled-run';
import type { PartitionBounds } from '../domain/types';

export function scopeStatements(r: RunSql): Pick<CompiledRun, 'outsidePlan'> {
  const { spec, shape, src, where, pcol } = r;
  return {
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
  };
}
