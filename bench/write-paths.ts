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
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type pg from 'pg';
import { stringify } from 'yaml';
import { startRun, waitForResult } from '../src/cli/start-run';
import { createPool } from '../src/db/pool';
import { ensureDatabase, startPostgres } from '../src/dev/postgres';
import { ensureTemporalCli } from '../src/dev/temporal-cli';
import { freePort, startDevServer } from '../src/dev/temporal-server';
import { createBackfillWorker, installRuntimeLogger } from '../src/worker';

const ROWS = Number(process.env.BENCH_ROWS || 2_000_000);
const PARTITIONS = Number(process.env.BENCH_PARTITIONS || 4);
const CHUNK = Number(process.env.BENCH_CHUNK || 100_000);
const DATASET = 'v2';
const say = (line: string) => process.stderr.write(`${line}\n`);

// an enrichment: a field out of the jsonb payload, and an amount converted through a join
const TRANSFORM = `SELECT c.id, c.tenant, c.created_at, c.payload->>'channel' AS channel, round(c.amount_cents * f.usd_rate / 100.0, 2) AS amount_usd
  FROM chunk c LEFT JOIN bench.fx f USING (currency)`;
const WHOLE = TRANSFORM.replace('FROM chunk c', 'FROM bench.orders c');
const COLS = 'id, tenant, created_at, channel, amount_usd';
const GUARD = '(t.tenant, t.created_at, t.channel, t.amount_usd) IS DISTINCT FROM (o.tenant, o.created_at, o.channel, o.amount_usd)';

async function createDataset(pool: pg.Pool): Promise<void> {
  const exists = (await pool.query<{ t: string | null }>("SELECT to_regclass('bench.orders')::text AS t")).rows[0].t;
  // the dataset's version: bump DATASET when its shape changes, so an old one is rebuilt
  const comment = exists ? (await pool.query<{ c: string | null }>("SELECT obj_description('bench.orders'::regclass) AS c")).rows[0].c : null;
  if (comment === `${DATASET}:${ROWS}`) return;
  say(`creating bench.orders with ${ROWS} rows…`);
  await pool.query(`
    DROP SCHEMA IF EXISTS bench CASCADE;
    CREATE SCHEMA bench;
    CREATE TABLE bench.fx (currency text PRIMARY KEY, usd_rate numeric(12,6) NOT NULL);
    INSERT INTO bench.fx VALUES ('USD', 1), ('EUR', 1.0832), ('GBP', 1.265), ('JPY', 0.006712);
    CREATE TABLE bench.orders (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, tenant integer NOT NULL,
      currency text, amount_cents bigint, channel text, payload jsonb NOT NULL);
    INSERT INTO bench.orders
    SELECT n * 3 + n % 3, timestamptz '2024-01-01' + (n % 86400) * interval '90 seconds', 1 + n % 50,
           CASE WHEN n % 97 = 0 THEN NULL ELSE (ARRAY['USD','EUR','GBP','JPY','CHF'])[1 + n % 5] END,
           CASE WHEN n % 41 = 0 THEN NULL ELSE 100 + (n * 48271) % 900000 END,
           (ARRAY['web','app','pos'])[1 + n % 3],
           -- about 330 bytes of jsonb per row, as in PERF-NOTES.md's dataset of the same size
           jsonb_build_object('sku', 'SKU-' || (n % 10000), 'qty', 1 + n % 7, 'channel', (ARRAY['web','app','pos'])[1 + n % 3],
             'customer', jsonb_build_object('id', n % 100000, 'country', (ARRAY['DE','FR','US','JP'])[1 + n % 4], 'segment', 'smb'),
             'lines', jsonb_build_array(jsonb_build_object('sku', 'A' || n % 97, 'qty', 1), jsonb_build_object('sku', 'B' || n % 89, 'qty', 2)),
             'note', md5(n::text) || md5((n + 1)::text) || md5((n + 2)::text))
      FROM generate_series(1::bigint, ${ROWS}) AS n;
    CREATE TABLE bench.orders_usd (id bigint PRIMARY KEY, tenant integer, created_at timestamptz, channel text, amount_usd numeric(14,2));
  `);
  await pool.query(`COMMENT ON TABLE bench.orders IS '${DATASET}:${ROWS}'`);
  await pool.query('VACUUM ANALYZE bench.orders');
}

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
  process.env.LOG_LEVEL = process.env.LOG_LEVEL || 'warn';
  installRuntimeLogger('warn');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'backfill-bench-'));
  const postgres = await startPostgres({ dataDir: path.join(process.env.BACKFILL_DATA_DIR || path.join(__dirname, '..', '.data'), 'postgres'), port: 54329, say });
  const url = await ensureDatabase(postgres.url, 'backfill_bench');
  process.env.BENCH_DATABASE_URL = url;
  const pool = createPool(url, { max: 4 });
  await createDataset(pool);
  const server = await startDevServer({ cliPath: await ensureTemporalCli(say), port: await freePort(), uiPort: null });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const { worker, close } = await createBackfillWorker({ temporal: { address: server.address, taskQueue: 'bench' }, maxConcurrentActivities: 4 });
  const running = worker.run();

  const truncate = () => pool.query('TRUNCATE bench.orders_usd').then(() => pool.query('VACUUM ANALYZE bench.orders_usd'));
  const results: Measured[] = [];
  const version = (await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0].v;
  say(`PostgreSQL ${version}, ${ROWS} rows, ${os.cpus().length} cores`);

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

  const specDir = path.join(tmp, 'specs');
  mkdirSync(specDir);
  const spec = (name: string, transform: Record<string, unknown>) => {
    const file = path.join(specDir, `${name}.yaml`);
    writeFileSync(file, stringify({
      name, reason: 'benchmark', database: 'BENCH_DATABASE_URL',
      source: { table: 'bench.orders', key: 'id' },
      // few, large partitions: each runs many chunks, so per-partition orchestration stays small
      partition: { by: 'range', column: 'id', size: Math.max(1, Math.ceil((ROWS * 3) / PARTITIONS)) },
      transform: { name, version: 1, ...transform },
      target: { table: 'bench.orders_usd', key: ['id'], mode: 'upsert' },
      limits: { chunkSize: CHUNK, concurrency: 2 },
    }));
    return file;
  };
  const backfill = async (file: string) => {
    const started = await startRun({ specFile: file, client, taskQueue: 'bench', actor: 'bench' });
    const result = await waitForResult(started.handle);
    if (result.status !== 'succeeded') throw new Error(`bench run ${started.runId} ended ${result.status}`);
    return result;
  };

  await truncate();
  const sqlSpec = spec('bench-sql', { sql: TRANSFORM });
  results.push(await measure(pool, '(b) backfill, SQL transform, concurrency 2', async () => (await backfill(sqlSpec)).rowsRead));
  const txid = (await pool.query<{ x: string }>('SELECT txid_current()::text AS x')).rows[0].x;
  const rerun = await measure(pool, '(c) re-run of (b) over the finished data', async () => (await backfill(sqlSpec)).rowsRead);
  const touched = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM bench.orders_usd WHERE xmin::text::bigint >= ($1::bigint % 4294967296)`, [txid]);
  results.push({ ...rerun, rewritten: Number(touched.rows[0].n) });
  await truncate();
  results.push(await measure(pool, '(d) backfill, TypeScript transform, concurrency 2', async () =>
    (await backfill(spec('bench-ts', { module: path.join(__dirname, 'transforms', 'orders-usd.ts') }))).rowsRead));

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

  worker.shutdown();
  await running;
  await close();
  await connection.close();
  await pool.end();
  await server.stop();
  await postgres.stop();
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
