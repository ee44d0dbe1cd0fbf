/**
 * What every statement of a run is built from: the spec and shape resolved into quoted names,
 * the scope filter, the keyset walk, the target join, and the predicates that bound a
 * partition and a chunk. compileRun (statements.ts) builds it once and hands it to each family.
 */
import { quoteIdent, quoteTable } from '../db/sql';
import type { PartitionBounds } from '../domain/types';
import type { ResolvedSpec } from '../specs/resolve';
import { keysetWalk, type KeysetWalk } from './keyset';
import { params, partitionPredicate, type Param } from './partition-predicate';
import type { RunShape } from './shape';
import { targetJoin, type TargetJoin } from './target-join';

export interface RunSql extends TargetJoin {
  spec: ResolvedSpec;
  shape: RunShape;
  /** The source, quoted. */
  src: string;
  /** ` AND (source.where)`, or empty. */
  where: string;
  walk: KeysetWalk;
  /** The partition column, quoted. */
  pcol: string;
  /** The SQL transform without its trailing semicolons; absent for a TypeScript transform. */
  transformSql?: string;
  /** The partition's rows on alias: its bounds, and the stretch of keys it holds if it was split while it ran. */
  partitionScope(bounds: PartitionBounds, alias: string, param: Param): string[];
  /** Predicate on alias `s` for the partition, then the chunk's key range; returns SQL and its values. */
  chunkPredicate(
    bounds: PartitionBounds,
    cursor: string | null,
    hi: string | null,
    alias?: string,
    numbered?: ReturnType<typeof params>,
  ): { sql: string; values: unknown[]; param: Param };
}

export function runSql(spec: ResolvedSpec, shape: RunShape): RunSql {
  // the newline ends a trailing -- comment in the filter; the filter was parsed as one expression
  const where = spec.source.where ? ` AND (${spec.source.where}\n)` : '';
  const walk = keysetWalk(spec, shape);
  const partitionScope = (bounds: PartitionBounds, alias: string, param: Param): string[] => {
    const scope = partitionPredicate(bounds, alias, shape.partitionColumnType, param, shape.keyType);
    return bounds.stretch ? [scope, ...walk.range(bounds, bounds.stretch.after, bounds.stretch.through, alias, param)] : [scope];
  };
  return {
    ...targetJoin(spec, shape),
    spec,
    shape,
    src: quoteTable(spec.source.table),
    where,
    walk,
    pcol: quoteIdent(spec.partition.column),
    transformSql: spec.transform.sql ? stripTrailingSemicolons(spec.transform.sql) : undefined,
    partitionScope,
    chunkPredicate(bounds, cursor, hi, alias = 's', numbered = params()) {
      const { values, param } = numbered;
      const parts = [...partitionScope(bounds, alias, param), ...walk.range(bounds, cursor, hi, alias, param)];
      return { sql: parts.join(' AND ') + where, values, param };
    },
  };
}

export function stripTrailingSemicolons(sql: string): string {
  return sql.replace(/[\s;]+$/, '');
}
