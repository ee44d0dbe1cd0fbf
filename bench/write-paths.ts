/**
 * Benchmark: the write paths of a backfill, side by side in one invocation on one
 * database and one 2,000,000-row dataset (BENCH_ROWS to change it):
 *   (a) the best single statements doing the same work: INSERT … ON CONFLICT and MERGE
 *   (b) this project end to end (Temporal + ledger + checkpoints), SQL transform, concurrency 2
 *   (c) a re-run of (b) over the finished data
 *   (d) this project with the TypeScript transform
 *   (e) the bare chunk loop: (b)'s compiled chunk statements in as many sessions as (b) has
 *       partitions in flight, with no Temporal and no ledger (bench/bare-chunk-loop.ts):
 *       (b) / (e) is what orchestration and checkpoints cost
 *   (f) one MERGE over the same rows kept in a monthly-partitioned table (bench.orders_monthly)
 *   (g) this project over that table with partition.by: native (one partition per leaf, each
 *       chunk pruned to its leaf): (g) / (f) beside (b) / (a2) is what a partitioned source costs
 *   (h) the bare chunk loop over (g)'s leaves, with (g)'s recorded plan and shape: (g) / (h) is
 *       (g)'s orchestration, (h) / (f) what chunking costs on this table
 *   (i) as (g) with limits.splitTail: when March runs alone, the free slot takes half of what it
 *       has left, so the 3 leaves keep both concurrency slots busy to the end
 *       (BENCH_CUT_LEAVES=1 measures partition.rows instead: each leaf cut into 4 ranges at plan time)
 *   (j) as (b) with undo: off — no before-images: (b) / (j) is what keeping them costs (every
 *       row is an insert here, so every row is imaged). (b), (d), (e), (g), (h), (i) keep them.
 * Prints the median rows/s of BENCH_ROUNDS rounds (default 3), WAL bytes per row and the ratio
 * to the faster single statement. BENCH_WORKERS=N runs the backfills on N worker processes.
 * Run: npm run bench   (DATABASE_URL to use a server; otherwise an embedded PostgreSQL)
 */
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { COLS, createMonthlyDataset, GUARD, ROWS, TIME_LAYOUT, TRANSFORM, WHOLE } from './dataset';
import { BARE_SHAPE, bareBench, benchSpec, CHUNK, PARTITIONS, sqlBenchSpec } from './bench-spec';
import { say, startBenchEnvironment } from './harness';
import { bareChunkLoop } from './bare-chunk-loop';
import { listRuns } from '../src/ledger/runs';
import { plannedBounds } from '../src/ledger/partition-reads';

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
/** Where the bare chunk loops keep their before-images, as a run would. */
const BARE_IMAGES = 'bench.bare_images';

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
  const sqlSpec = sqlBenchSpec();
  const { spec: bareSpec, bounds: bareBounds } = bareBench();
  const tsSpec = benchSpec('bench-ts', { module: path.join(__dirname, 'transforms', 'orders-usd.ts') });
  await createMonthlyDataset(pool);
  const monthly = (sql: string) => sql.replace('bench.orders c', 'bench.orders_monthly c');
  const nativeSpec = {
    ...sqlSpec,
    // a partitioned table's unique key includes its partition key; the target's stays id
    source: { table: 'bench.orders_monthly', key: ['id', 'created_at'] },
    partition: { by: 'native', column: 'created_at' },
    transform: { name: 'bench-native', version: 1, sql: TRANSFORM },
  };
  // about a quarter of a month's rows: every leaf in 4 pieces, 12 partitions for 2 slots
  const cutLeaves = process.env.BENCH_CUT_LEAVES === '1';
  const tailSpec = cutLeaves
    ? { ...nativeSpec, partition: { ...nativeSpec.partition, rows: Math.ceil(ROWS / 12) } }
    : { ...nativeSpec, limits: { ...nativeSpec.limits, splitTail: true } };
  const tailLabel = cutLeaves ? `leaves cut into key ranges (partition.rows: ${Math.ceil(ROWS / 12)})` : 'limits.splitTail';
  const merge = (source: string) => `MERGE INTO bench.orders_usd t USING (${source}) o ON t.id = o.id
         WHEN MATCHED AND ${GUARD} THEN UPDATE SET tenant = o.tenant, created_at = o.created_at, channel = o.channel, amount_usd = o.amount_usd
         WHEN NOT MATCHED THEN INSERT (${COLS}) VALUES (o.id, o.tenant, o.created_at, o.channel, o.amount_usd)`;

  // every method once per round, in the same order: a disk stall or a noisy neighbour hits one
  // round of one method, and the median of the rounds sees through it
  const rounds: Measured[][] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    say(`round ${round}/${ROUNDS}`);
    const results: Measured[] = [];
    await truncate();
    results.push(
      await measure(
        pool,
        '(a1) one INSERT … ON CONFLICT DO UPDATE statement',
        async () =>
          (
            await pool.query(`INSERT INTO bench.orders_usd (${COLS}) ${WHOLE}
         ON CONFLICT (id) DO UPDATE SET tenant = EXCLUDED.tenant, created_at = EXCLUDED.created_at, channel = EXCLUDED.channel, amount_usd = EXCLUDED.amount_usd
         WHERE (bench.orders_usd.tenant, bench.orders_usd.created_at, bench.orders_usd.channel, bench.orders_usd.amount_usd)
               IS DISTINCT FROM (EXCLUDED.tenant, EXCLUDED.created_at, EXCLUDED.channel, EXCLUDED.amount_usd)`)
          ).rowCount ?? 0,
      ),
    );
    await truncate();
    results.push(await measure(pool, '(a2) one MERGE statement', async () => (await pool.query(merge(WHOLE))).rowCount ?? 0));
    await truncate();
    results.push(await measure(pool, '(b) backfill, SQL transform, concurrency 2', async () => (await env.backfill(`bench-sql-${round}`, sqlSpec)).rowsRead));
    const txid = (await pool.query<{ x: string }>('SELECT txid_current()::text AS x')).rows[0].x;
    const rerun = await measure(pool, '(c) re-run of (b) over the finished data', async () => (await env.backfill(`bench-sql-${round}`, sqlSpec)).rowsRead);
    const touched = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM bench.orders_usd WHERE xmin::text::bigint >= ($1::bigint % 4294967296)`, [txid]);
    results.push({ ...rerun, rewritten: Number(touched.rows[0].n) });
    await truncate();
    results.push(
      await measure(pool, '(d) backfill, TypeScript transform, concurrency 2', async () => (await env.backfill(`bench-ts-${round}`, tsSpec)).rowsRead),
    );
    await truncate();
    results.push(
      await measure(pool, "(e) bare chunk loop: (b)'s chunk statements in 2 sessions, no Temporal, no ledger", () =>
        bareChunkLoop(env.url, bareSpec, BARE_SHAPE, bareBounds, 2, BARE_IMAGES),
      ),
    );
    await truncate();
    results.push(
      await measure(pool, '(f) one MERGE statement over the monthly-partitioned table', async () => (await pool.query(merge(monthly(WHOLE)))).rowCount ?? 0),
    );
    await truncate();
    results.push(
      await measure(
        pool,
        '(g) backfill of the monthly-partitioned table, partition.by: native, concurrency 2',
        async () => (await env.backfill(`bench-native-${round}`, nativeSpec)).rowsRead,
      ),
    );
    // the leaves and the shape exactly as (g) planned and recorded them
    const [nativeRun] = await listRuns(pool, { name: `bench-native-${round}`, limit: 1 });
    const leaves = await plannedBounds(pool, nativeRun.run_id);
    await truncate();
    results.push(
      await measure(pool, "(h) bare chunk loop: (g)'s chunk statements in 2 sessions, no Temporal, no ledger", () =>
        bareChunkLoop(env.url, nativeRun.spec, nativeRun.shape, leaves, 2, BARE_IMAGES),
      ),
    );
    await truncate();
    results.push(await measure(pool, `(i) as (g), ${tailLabel}`, async () => (await env.backfill(`bench-native-tail-${round}`, tailSpec)).rowsRead));
    await truncate();
    results.push(
      await measure(
        pool,
        '(j) as (b), undo: off (no before-images)',
        async () => (await env.backfill(`bench-sql-off-${round}`, { ...sqlSpec, undo: 'off' })).rowsRead,
      ),
    );
    rounds.push(results);
  }

  const rate = (m: Measured) => m.rows / m.seconds;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const medianRate = (i: number) => median(rounds.map((r) => rate(r[i])));
  const fastest = Math.max(medianRate(0), medianRate(1));
  const lines = [
    `| Method | rows/s (median) | rounds | × faster single statement | WAL B/row |`,
    `|---|---|---|---|---|`,
    ...rounds[0].map((first, i) => {
      const wal = median(rounds.map((r) => r[i].walBytes / r[i].rows)).toFixed(0);
      const rewritten = first.rewritten !== undefined ? ` (target rows rewritten: ${Math.max(...rounds.map((r) => r[i].rewritten ?? 0))})` : '';
      const each = rounds.map((r) => Math.round(rate(r[i]) / 1000) + 'k').join(' / ');
      return `| ${first.label} | ${Math.round(medianRate(i)).toLocaleString('en-US')} | ${each} | ${(medianRate(i) / fastest).toFixed(2)} | ${wal}${rewritten} |`;
    }),
    '',
    `(b) / faster single statement: ${(medianRate(2) / fastest).toFixed(2)} (goal ≥ 1.0); (c) / (b): ${(medianRate(3) / medianRate(2)).toFixed(2)} (goal > 1); ` +
      `(d) / (a1) INSERT … ON CONFLICT: ${(medianRate(4) / medianRate(0)).toFixed(2)} (goal ≥ 0.75); (b) / (e) the bare chunk loop: ${(medianRate(2) / medianRate(5)).toFixed(2)} (goal ≥ 0.95); ` +
      `partitioned (g) / (f): ${(medianRate(7) / medianRate(6)).toFixed(2)} beside unpartitioned (b) / (a2): ${(medianRate(2) / medianRate(1)).toFixed(2)} ` +
      `(goal: within 10 %, ${((medianRate(7) / medianRate(6) / (medianRate(2) / medianRate(1))) * 100).toFixed(0)} % here); ` +
      `(g) / (h) its bare chunk loop: ${(medianRate(7) / medianRate(8)).toFixed(2)}; ` +
      `${cutLeaves ? 'leaves cut' : 'splitTail'} (i) / (f): ${(medianRate(9) / medianRate(6)).toFixed(2)} (${((medianRate(9) / medianRate(6) / (medianRate(2) / medianRate(1))) * 100).toFixed(0)} % of the unpartitioned ratio); ` +
      `before-images (b) / (j): ${(medianRate(2) / medianRate(10)).toFixed(2)} (goal ≥ 0.85); (b) with images / (a2) MERGE: ${(medianRate(2) / medianRate(1)).toFixed(2)}`,
  ];
  const workers = process.env.BENCH_WORKERS
    ? `${process.env.BENCH_WORKERS} worker processes × ${process.env.BENCH_WORKER_ACTIVITIES || 2} activities`
    : 'one in-process worker';
  process.stdout.write(
    `\nPostgreSQL ${version}, ${ROWS} source rows (created_at ${TIME_LAYOUT}), ${PARTITIONS} partitions, chunks of ${CHUNK}, ${workers}, ${os.cpus().length} cores, ${ROUNDS} rounds, ${new Date().toISOString()}\n\n${lines.join('\n')}\n`,
  );

  await env.stop();
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
