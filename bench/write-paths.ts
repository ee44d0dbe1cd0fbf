/**
 * Benchmark: the write paths of a backfill, side by side in one invocation on one
 * database and one 2,000,000-row dataset (BENCH_ROWS to change it):
 *   (a) the best single statements doing the same work: INSERT … ON CONFLICT and MERGE
 *   (b) this project end to end (Temporal + ledger + checkpoints), SQL transform, concurrency 2
 *   (c) a re-run of (b) over the finished data
 *   (d) this project with the TypeScript transform
 * Prints rows/s, WAL bytes per row and the ratio to the faster single statement.
 * Run: npm run bench   (DATABASE_URL to use a server; otherwise an embedded PostgreSQL)
 */
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { COLS, GUARD, MAX_ID, ROWS, TRANSFORM, WHOLE } from './dataset';
import { say, startBenchEnvironment } from './harness';

const PARTITIONS = Number(process.env.BENCH_PARTITIONS || 4);
const CHUNK = Number(process.env.BENCH_CHUNK || 100_000);

interface Measured {
  label: string;
  seconds: number;
  rows: number;
  walBytes: number;
  rewritten?: number;
}

async function measure(pool: pg.Pool, label: string, work: () => Promise<number>): Promise<Measured> {
  await pool.query('CHECKPOINT');
  const before = (await pool.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0].lsn;
  const started = process.hrtime.bigint();
  const rows = await work();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const wal = await pool.query<{ b: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::bigint AS b', [before]);
  const m = { label, seconds, rows, walBytes: Number(wal.rows[0].b) };
  say(`  ${label}: ${Math.round(rows / seconds).toLocaleString('en-US')} rows/s`);
  return m;
}

async function main(): Promise<void> {
  const env = await startBenchEnvironment();
  const { pool, version } = env;
  const truncate = () => pool.query('TRUNCATE bench.orders_usd').then(() => pool.query('VACUUM ANALYZE bench.orders_usd'));
  const results: Measured[] = [];

  await truncate();
  results.push(await measure(pool, '(a1) one INSERT … ON CONFLICT DO UPDATE statement', async () =>
    (await pool.query(`INSERT INTO bench.orders_usd (${COLS}) ${WHOLE}
       ON CONFLICT (id) DO UPDATE SET tenant = EXCLUDED.tenant, created_at = EXCLUDED.created_at, channel = EXCLUDED.channel, amount_usd = EXCLUDED.amount_usd
       WHERE (bench.orders_usd.tenant, bench.orders_usd.created_at, bench.orders_usd.channel, bench.orders_usd.amount_usd)
             IS DISTINCT FROM (EXCLUDED.tenant, EXCLUDED.created_at, EXCLUDED.channel, EXCLUDED.amount_usd)`)).rowCount ?? 0));
  await truncate();
  results.push(await measure(pool, '(a2) one MERGE statement', async () =>
    (await pool.query(`MERGE INTO bench.orders_usd t USING (${WHOLE}) o ON t.id = o.id
       WHEN MATCHED AND ${GUARD} THEN UPDATE SET tenant = o.tenant, created_at = o.created_at, channel = o.channel, amount_usd = o.amount_usd
       WHEN NOT MATCHED THEN INSERT (${COLS}) VALUES (o.id, o.tenant, o.created_at, o.channel, o.amount_usd)`)).rowCount ?? 0));

  const spec = (name: string, transform: Record<string, unknown>) => ({
    source: { table: 'bench.orders', key: 'id' },
    // few, large partitions: each runs many chunks, so per-partition orchestration stays small
    partition: { by: 'range', column: 'id', size: Math.max(1, Math.ceil((MAX_ID + 1) / PARTITIONS)) },
    transform: { name, version: 1, ...transform },
    target: { table: 'bench.orders_usd', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: CHUNK, concurrency: 2 },
  });
  const backfill = (name: string, s: Record<string, unknown>) => env.backfill(name, s);

  await truncate();
  const sqlSpec = spec('bench-sql', { sql: TRANSFORM });
  results.push(await measure(pool, '(b) backfill, SQL transform, concurrency 2', async () => (await backfill('bench-sql', sqlSpec)).rowsRead));
  const txid = (await pool.query<{ x: string }>('SELECT txid_current()::text AS x')).rows[0].x;
  const rerun = await measure(pool, '(c) re-run of (b) over the finished data', async () => (await backfill('bench-sql', sqlSpec)).rowsRead);
  const touched = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM bench.orders_usd WHERE xmin::text::bigint >= ($1::bigint % 4294967296)`, [txid]);
  results.push({ ...rerun, rewritten: Number(touched.rows[0].n) });
  await truncate();
  results.push(await measure(pool, '(d) backfill, TypeScript transform, concurrency 2', async () =>
    (await backfill('bench-ts', spec('bench-ts', { module: path.join(__dirname, 'transforms', 'orders-usd.ts') }))).rowsRead));

  const fastest = Math.max(results[0].rows / results[0].seconds, results[1].rows / results[1].seconds);
  const onConflict = results[0].rows / results[0].seconds;
  const lines = [
    `| Method | rows | seconds | rows/s | × faster single statement | WAL B/row |`,
    `|---|---|---|---|---|---|`,
    ...results.map((r) => {
      const rate = r.rows / r.seconds;
      const wal = (r.walBytes / r.rows).toFixed(0) + (r.rewritten !== undefined ? ` (target rows rewritten: ${r.rewritten})` : '');
      return `| ${r.label} | ${r.rows} | ${r.seconds.toFixed(1)} | ${Math.round(rate).toLocaleString('en-US')} | ${(rate / fastest).toFixed(2)} | ${wal} |`;
    }),
    '',
    `(d) / (a1) INSERT … ON CONFLICT: ${((results[4].rows / results[4].seconds) / onConflict).toFixed(2)}`,
  ];
  process.stdout.write(`\nPostgreSQL ${version}, ${ROWS} source rows, ${PARTITIONS} partitions, chunks of ${CHUNK}, ${os.cpus().length} cores, ${new Date().toISOString()}\n\n${lines.join('\n')}\n`);

  await env.stop();
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
