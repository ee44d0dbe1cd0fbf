/**
 * The bench spec of `npm run bench` — few, large range partitions of bench.orders, the SQL
 * transform, concurrency 2 — and what the bare chunk loop needs to run the same chunks: one
 * definition for the write-path benchmark and the chunk profile.
 */
import type { Spec } from '../src/specs/schema';
import type { PartitionBounds } from '../src/domain/types';
import { COLS, MAX_ID, TRANSFORM } from './dataset';

export const PARTITIONS = Number(process.env.BENCH_PARTITIONS || 4);
export const CHUNK = Number(process.env.BENCH_CHUNK || 100_000);

export function benchSpec(name: string, transform: Record<string, unknown>) {
  return {
    source: { table: 'bench.orders', key: 'id' },
    // few, large partitions: each runs many chunks, so per-partition orchestration stays small
    partition: { by: 'range', column: 'id', size: Math.max(1, Math.ceil((MAX_ID + 1) / PARTITIONS)) },
    transform: { name, version: 1, ...transform },
    target: { table: 'bench.orders_usd', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: CHUNK, concurrency: 2 },
  };
}

export const sqlBenchSpec = () => benchSpec('bench-sql', { sql: TRANSFORM });

/** (b)'s spec as the bare loop takes it, with the partitions registration would plan. */
export function bareBench(): { spec: Spec; bounds: PartitionBounds[] } {
  const sql = sqlBenchSpec();
  const size = sql.partition.size;
  return {
    spec: { name: 'bench-bare', reason: 'benchmark', database: 'BENCH_DATABASE_URL', ...sql } as unknown as Spec,
    bounds: Array.from({ length: PARTITIONS }, (_, i) => ({ kind: 'range', column: 'id', lo: String(i * size), hi: String((i + 1) * size) })),
  };
}

/** What registration reads from the catalog for (b)'s spec: the bare loop compiles the same SQL. */
export const BARE_SHAPE = {
  keyType: 'bigint',
  partitionColumnType: 'bigint',
  outputColumns: COLS.split(', '),
  targetKeyType: 'bigint',
  chunkOrder: 'key' as const,
  // as registration reads it for this target: inserted rows imaged as their keys
  imageKeys: true,
};
