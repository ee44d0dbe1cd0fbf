/**
 * Warns before a run when chunks would be expensive to find: a chunk is the next `chunkSize`
 * rows of a partition in key order ((partition column, key) order for time partitions), and
 * unless an index returns a partition's rows in that order, PostgreSQL must read and sort the
 * whole partition to find every chunk — a partition of N rows then costs about
 * N × (N / chunkSize) row reads instead of N.
 * Reads the planner's estimate (EXPLAIN, nothing runs) for the largest planned partition.
 */
import type pg from 'pg';
import type { ResolvedSpec } from '../specs/resolve';
import type { PlannedPartition } from '../domain/types';
import type { RunShape } from '../compiler/shape';
import { pasteableName, quoteTable } from '../db/sql';
import { compileRun } from '../compiler/statements';

interface PlanNode {
  'Node Type': string;
  'Plan Rows': number;
  Filter?: string;
  Plans?: PlanNode[];
}

export interface ChunkReads {
  /** Rows PostgreSQL expects to read to find one chunk. */
  rowsPerChunk: number;
  how: 'sort' | 'filtered-key-scan';
}

/**
 * How a chunk's keys are found, from the plan of the chunk-bounds query: a sort under the LIMIT
 * reads the whole partition per chunk; a scan of the key index that filters on the partition
 * column reads about chunkSize / (partition's share of the table) rows per chunk. Undefined
 * when neither applies (an index range scan: the good case).
 */
export function chunkReads(plan: PlanNode, partitionColumn: string, chunkSize: number, tableRows: number): ChunkReads | undefined {
  const limit = find(plan, (n) => n['Node Type'] === 'Limit');
  const below = limit?.Plans?.[0];
  if (!below) return undefined;
  // a plain sort reads everything below it; an incremental sort (column index, then key) only a chunk's worth
  if (below['Node Type'] === 'Sort') return { rowsPerChunk: below.Plans?.[0]?.['Plan Rows'] ?? below['Plan Rows'], how: 'sort' };
  const filtersPartition = below.Filter !== undefined && new RegExp(`\\b${partitionColumn.replace(/[^a-z0-9_]/gi, '')}\\b`).test(below.Filter);
  if (/Index (Only )?Scan$/.test(below['Node Type']) && filtersPartition) {
    return { rowsPerChunk: (chunkSize * tableRows) / Math.max(1, below['Plan Rows']), how: 'filtered-key-scan' };
  }
  return undefined;
}

function find(node: PlanNode, test: (n: PlanNode) => boolean): PlanNode | undefined {
  if (test(node)) return node;
  for (const child of node.Plans ?? []) {
    const hit = find(child, test);
    if (hit) return hit;
  }
  return undefined;
}

export async function chunkAccessWarnings(db: pg.Pool, spec: ResolvedSpec, shape: RunShape, partitions: PlannedPartition[]): Promise<string[]> {
  const keys = spec.source.key;
  if (partitions.length === 0 || spec.target.mode === 'replace' || spec.partition.column === keys[0]) return [];
  const compiled = compileRun(spec, shape);
  const { chunkSize } = spec.limits;
  const tableRows = Number(
    (await db.query<{ n: number }>('SELECT greatest(reltuples, 0) AS n FROM pg_class WHERE oid = $1::regclass', [quoteTable(spec.source.table)])).rows[0]?.n ??
      0,
  );
  let worst: { reads: ChunkReads; partition: PlannedPartition } | undefined;
  // up to 24 partitions spread over the plan, ends included (skew tends to sit at one end;
  // the last may be the NULL partition): EXPLAIN only, about a millisecond each
  const sample = new Set([
    0,
    partitions.length - 2,
    partitions.length - 1,
    ...Array.from({ length: 21 }, (_, i) => Math.round((i * (partitions.length - 1)) / 20)),
  ]);
  for (const partition of [...sample].filter((i) => i >= 0).map((i) => partitions[i])) {
    const q = compiled.chunkBounds(partition.bounds, null, chunkSize);
    const { rows } = await db.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (FORMAT JSON) ${q.text}`, q.values);
    const reads = chunkReads(rows[0]['QUERY PLAN'][0].Plan, spec.partition.column, chunkSize, tableRows);
    if (reads && (!worst || reads.rowsPerChunk > worst.reads.rowsPerChunk)) worst = { reads, partition };
  }
  // a partition of a few chunks may be sorted whole, cheaply; a read amplification of 8 or more is the pathology
  if (!worst || worst.reads.rowsPerChunk < 8 * chunkSize) return [];
  const { column, by } = spec.partition;
  const key = keys.join(', ');
  const order = shape.chunkOrder === 'column-key' ? [column, ...keys.filter((k) => k !== column)].join(', ') : key;
  const how =
    worst.reads.how === 'sort'
      ? `no index returns a partition's rows in (${order}) order, so every chunk reads and sorts its whole partition`
      : `chunks are found by scanning the ${key} index and filtering on ${column}, so every chunk reads past other partitions' rows`;
  const fix =
    by === 'list'
      ? `create an index on ${pasteableName(spec.source.table)} (${[column, ...keys].map(pasteableName).join(', ')}), which returns each partition's rows in ${key} order`
      : `create an index on ${pasteableName(spec.source.table)} (${pasteableName(column)}): chunks then walk it`;
  const rows = Math.round(worst.reads.rowsPerChunk).toLocaleString('en-US');
  return [`partition: ${how} (about ${rows} rows read per chunk of ${chunkSize}, estimated for ${worst.partition.id}); ${fix}`];
}
