/**
 * The one-row partitions that bench:small, bench:servers and bench:hops time: a table of `rows`
 * rows, each its own partition, and the spec body (name, reason and database added by the caller)
 * that writes them, so that orchestration is all there is to measure.
 */
import type pg from 'pg';

export async function createTinyTable(pool: pg.Pool, rows: number): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS bench_small CASCADE; CREATE SCHEMA bench_small;
    CREATE TABLE bench_small.tiny (id bigint PRIMARY KEY, v integer NOT NULL);
    INSERT INTO bench_small.tiny SELECT g, g % 97 FROM generate_series(1, ${Math.trunc(rows)}) g;
    CREATE TABLE bench_small.tiny_out (id bigint PRIMARY KEY, v2 integer);
    ANALYZE bench_small.tiny;`);
}

export function tinySpec(concurrency: number): Record<string, unknown> {
  return {
    source: { table: 'bench_small.tiny', key: 'id' },
    partition: { by: 'range', column: 'id', size: 1 },
    transform: { name: 'tiny', version: 1, sql: 'SELECT id, v * 2 AS v2 FROM chunk' },
    target: { table: 'bench_small.tiny_out', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: 1000, concurrency },
  };
}
