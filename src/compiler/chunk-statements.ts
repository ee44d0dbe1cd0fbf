/**
 * The statements that walk a partition and fill the session's output table: the next chunk's
 * size and last key, what is left, the chunk's rows for a SQL or TypeScript transform, and the
 * output table itself. Part of CompiledRun (statements.ts).
 */
import { quoteIdent } from '../db/sql';
import { boundsText } from './partition-predicate';
import { outputTableName, outputTakesCopy } from './output-table';
import type { RunSql } from './run-sql';
import type { CompiledRun } from './compiled-run';
import type { PartitionBounds } from '../domain/types';

type ChunkStatements = Pick<
  CompiledRun,
  | 'outputTable'
  | 'createOutputTable'
  | 'chunkBounds'
  | 'rowsLeft'
  | 'fillFromSql'
  | 'fillChunkFromSql'
  | 'readChunk'
  | 'fillFromCopy'
  | 'outputTakesCopy'
  | 'fillFromJson'
  | 'outputTableHere'
  | 'outputKeyRange'
  | 'describeRange'
>;

export function chunkStatements(r: RunSql): ChunkStatements {
  const { spec, shape, src, walk, out, cols, keyCols, ranged, target, transformSql, chunkPredicate } = r;
  const fill = (bounds: PartitionBounds, cursor: string | null, hi: string | null) => {
    if (!transformSql) throw new Error('fillFromSql needs a SQL transform');
    const p = chunkPredicate(bounds, cursor, hi);
    return {
      chunk: `WITH chunk AS (SELECT s.* FROM ${src} s WHERE ${p.sql})`,
      insert: `INSERT INTO ${out} (${cols.join(', ')}) SELECT ${cols.map((c) => `t.${c}`).join(', ')} FROM (${transformSql}\n) t`,
      values: p.values,
    };
  };
  return {
    outputTable: out,
    createOutputTable:
      // ON COMMIT DELETE ROWS: each chunk starts empty without dropping the table (no catalog churn, no WAL)
      `CREATE TEMP TABLE IF NOT EXISTS ${outputTableName(spec, shape)} ON COMMIT DELETE ROWS AS ` + `SELECT ${cols.join(', ')} FROM ${target} WITH NO DATA`,
    chunkBounds(bounds, cursor, limit, likelyLast) {
      const p = chunkPredicate(bounds, cursor, null);
      const lim = p.param(limit, 'integer');
      return { text: walk.nextChunk(bounds, src, p.sql, lim, likelyLast), values: p.values };
    },
    rowsLeft(bounds, cursor, cap) {
      const p = chunkPredicate(bounds, cursor, null);
      const lim = p.param(cap, 'integer');
      return { text: `SELECT count(*)::integer AS n FROM (SELECT FROM ${src} s WHERE ${p.sql} LIMIT ${lim}) r`, values: p.values };
    },
    fillFromSql(bounds, cursor, hi) {
      const { chunk, insert, values } = fill(bounds, cursor, hi);
      return { text: `${chunk} ${insert}`, values };
    },
    fillChunkFromSql(bounds, cursor, hi) {
      const { chunk, insert, values } = fill(bounds, cursor, hi);
      // the aggregate reads the inserted keys as RETURNING hands them over: the output table's
      // column, so min() and max() follow its collation as outputKeyRange's do
      const range = ranged ? `, min(k)::text AS lo, max(k)::text AS hi` : '';
      return {
        text: `${chunk}, filled AS (${insert} RETURNING ${keyCols[0]} AS k) SELECT count(*)::integer AS n${range} FROM filled`,
        values,
      };
    },
    readChunk(bounds, cursor, hi, columns) {
      const p = chunkPredicate(bounds, cursor, hi);
      const list = columns && columns.length > 0 ? columns.map((c) => `s.${quoteIdent(c)}`).join(', ') : 's.*';
      return { text: `SELECT ${list} FROM ${src} s WHERE ${p.sql} ORDER BY ${walk.orderBy(bounds, 's')}`, values: p.values };
    },
    fillFromCopy: `COPY ${out} (${cols.join(', ')}) FROM STDIN`,
    outputTakesCopy: outputTakesCopy(out, shape.outputColumns),
    fillFromJson(rowsJson) {
      return {
        text: `INSERT INTO ${out} (${cols.join(', ')}) SELECT ${cols.join(', ')} FROM json_populate_recordset(NULL::${out}, $1::json)`,
        values: [rowsJson],
      };
    },
    outputTableHere: { text: 'SELECT to_regclass($1) IS NOT NULL AS here', values: [out] },
    outputKeyRange: ranged ? `SELECT min(${keyCols[0]})::text AS lo, max(${keyCols[0]})::text AS hi FROM ${out}` : null,
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
  };
}
