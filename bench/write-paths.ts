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
 * Prints the median rows/s of BENCH_ROUNDS rounds (default 3), WAL bytes per row, the ratio
 * to the faster single statement, and where the CPU went (bench/cpu.ts): seconds per 1M rows of
 * PostgreSQL, of the workers (with the bench's own process: the bare loops run there) and of
 * Temporal, and how busy the machine's cores were — a method that keeps them all busy is bounded
 * by CPU, and only less CPU per row makes it faster. BENCH_WORKERS=N runs the backfills on N worker processes.
 * BENCH_METHODS=a1,b,d,e runs only those; BENCH_SIZES=2000000:4,10000000:8 runs the benchmark
 * once per size (rows:partitions) in this invocation and ends with the headline ratios side by side.
 * Run: npm run bench   (DATABASE_URL to use a server; otherwise an embedded PostgreSQL)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { COLS, createMonthlyDataset, GUARD, ROWS, TIME_LAYOUT, TRANSFORM, WHOLE } from './dataset';
import { BARE_SHAPE, bareBench, benchSpec, CHUNK, PARTITIONS, sqlBenchSpec } from './bench-spec';
import { say, startBenchEnvironment } from './harness';
import { cpuNow, cpuSince, type CpuUse } from './cpu';
import { bareChunkLoop, openBareSessions } from './bare-chunk-loop';
import { listRuns } from '../src/ledger/runs';
import { plannedBounds } from '../src/ledger/partition-reads';

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
/** Where the bare chunk loops keep their before-images, as a run would. */
const BARE_IMAGES = 'bench.bare_images';

interface Measured {
  key?: string;
  label: string;
  seconds: number;
  rows: number;
  walBytes: number;
  cpu: CpuUse;
  rewritten?: number;
}

async function measure(pool: pg.Pool, workerPids: number[], label: string, work: () => Promise<number>): Promise<Measured> {
  await pool.query('CHECKPOINT');
  const before = (await pool.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0].lsn;
  const cpu = cpuNow(workerPids);
  const started = process.hrtime.bigint();
  const rows = await work();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = cpuSince(cpu, workerPids, seconds);
  const wal = await pool.query<{ b: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::bigint AS b', [before]);
  const m = { label, seconds, rows, walBytes: Number(wal.rows[0].b), cpu: used };
  say(`  ${label}: ${Math.round(rows / seconds).toLocaleString('en-US')} rows/s`);
  return m;
}

interface Method {
  /** What BENCH_METHODS names it by: a1, a2, b … j. */
  key: string;
  label: string;
  run: (round: number) => Promise<number>;
  /** Runs over what the method before it left in the target, instead of an emptied one, and counts the target rows it rewrote. */
  rerun?: boolean;
  /** Needs this method to have run just before it in the round. */
  after?: string;
  /** Reads bench.orders_monthly (built on first use). */
  monthly?: boolean;
}

/** BENCH_METHODS (e.g. `a1,b,d,e`) picks methods in their usual order; a method that needs another brings it. */
function selectMethods(methods: Method[], list: string | undefined): Method[] {
  if (!list) return methods;
  const asked = new Set(list.split(',').map((k) => k.trim()));
  const unknown = [...asked].filter((k) => !methods.some((m) => m.key === k));
  if (unknown.length > 0) throw new Error(`BENCH_METHODS: no method ${unknown.join(', ')} (methods: ${methods.map((m) => m.key).join(', ')})`);
  for (const m of methods) if (asked.has(m.key) && m.after) asked.add(m.after);
  return methods.filter((m) => asked.has(m.key));
}

interface Ratio {
  name: string;
  value: number;
  goal?: string;
}

/** The ratios the goals in bench/RESULTS.md are stated in, each where both its methods ran. */
function headlineRatios(r: Map<string, number>, tail: string): Ratio[] {
  const out: Ratio[] = [];
  const add = (name: string, a: string, b: string, goal?: string) => {
    if (r.has(a) && r.has(b)) out.push({ name, value: r.get(a)! / r.get(b)!, goal });
  };
  if (r.has('b') && (r.has('a1') || r.has('a2')))
    out.push({ name: '(b) / faster single statement', value: r.get('b')! / Math.max(r.get('a1') ?? 0, r.get('a2') ?? 0), goal: 'goal ≥ 0.90' });
  add('(c) / (b)', 'c', 'b', 'goal > 1');
  add('(d) / (a1) INSERT … ON CONFLICT', 'd', 'a1', 'goal ≥ 0.85');
  add('(b) / (e) the bare chunk loop', 'b', 'e', 'goal ≥ 0.95');
  add('partitioned (g) / (f)', 'g', 'f');
  add('unpartitioned (b) / (a2)', 'b', 'a2');
  if (['b', 'a2', 'f', 'g'].every((k) => r.has(k)))
    out.push({ name: '(g) / (f) as a share of (b) / (a2)', value: r.get('g')! / r.get('f')! / (r.get('b')! / r.get('a2')!), goal: 'goal ≥ 0.90' });
  add('(g) / (h) its bare chunk loop', 'g', 'h', 'goal ≥ 0.95');
  add(`${tail} (i) / (f)`, 'i', 'f');
  if (['b', 'a2', 'f', 'i'].every((k) => r.has(k)))
    out.push({ name: '(i) / (f) as a share of (b) / (a2)', value: r.get('i')! / r.get('f')! / (r.get('b')! / r.get('a2')!), goal: 'goal ≥ 0.90' });
  add('before-images (b) / (j)', 'b', 'j', 'goal ≥ 0.95');
  return out;
}

async function main(): Promise<void> {
  if (process.env.BENCH_SIZES) return sizes(process.env.BENCH_SIZES);
  const env = await startBenchEnvironment();
  const bareSessions = openBareSessions(env.url);
  const { pool, version } = env;
  const truncate = () => pool.query('TRUNCATE bench.orders_usd').then(() => pool.query('VACUUM ANALYZE bench.orders_usd'));
  const sqlSpec = sqlBenchSpec();
  const { spec: bareSpec, bounds: bareBounds } = bareBench();
  const tsSpec = benchSpec('bench-ts', { module: path.join(__dirname, 'transforms', 'orders-usd.ts') });
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

  // (h) replays the leaves (g) planned; (c) re-runs (b) over its finished data
  let nativeRunName = '';
  let sqlRunName = '';
  const methods: Method[] = [
    {
      key: 'a1',
      label: '(a1) one INSERT … ON CONFLICT DO UPDATE statement',
      run: async () =>
        (
          await pool.query(`INSERT INTO bench.orders_usd (${COLS}) ${WHOLE}
         ON CONFLICT (id) DO UPDATE SET tenant = EXCLUDED.tenant, created_at = EXCLUDED.created_at, channel = EXCLUDED.channel, amount_usd = EXCLUDED.amount_usd
         WHERE (bench.orders_usd.tenant, bench.orders_usd.created_at, bench.orders_usd.channel, bench.orders_usd.amount_usd)
               IS DISTINCT FROM (EXCLUDED.tenant, EXCLUDED.created_at, EXCLUDED.channel, EXCLUDED.amount_usd)`)
        ).rowCount ?? 0,
    },
    { key: 'a2', label: '(a2) one MERGE statement', run: async () => (await pool.query(merge(WHOLE))).rowCount ?? 0 },
    {
      key: 'b',
      label: '(b) backfill, SQL transform, concurrency 2',
      run: async (round) => (await env.backfill((sqlRunName = `bench-sql-${round}`), sqlSpec)).rowsRead,
    },
    {
      key: 'c',
      label: '(c) re-run of (b) over the finished data',
      rerun: true,
      after: 'b',
      run: async () => (await env.backfill(sqlRunName, sqlSpec)).rowsRead,
    },
    {
      key: 'd',
      label: '(d) backfill, TypeScript transform, concurrency 2',
      run: async (round) => (await env.backfill(`bench-ts-${round}`, tsSpec)).rowsRead,
    },
    {
      key: 'e',
      label: "(e) bare chunk loop: (b)'s chunk statements in 2 sessions, no Temporal, no ledger",
      run: () => bareChunkLoop(bareSessions, bareSpec, BARE_SHAPE, bareBounds, BARE_IMAGES, ROWS),
    },
    {
      key: 'f',
      label: '(f) one MERGE statement over the monthly-partitioned table',
      monthly: true,
      run: async () => (await pool.query(merge(monthly(WHOLE)))).rowCount ?? 0,
    },
    {
      key: 'g',
      label: '(g) backfill of the monthly-partitioned table, partition.by: native, concurrency 2',
      monthly: true,
      run: async (round) => (await env.backfill((nativeRunName = `bench-native-${round}`), nativeSpec)).rowsRead,
    },
    {
      key: 'h',
      label: "(h) bare chunk loop: (g)'s chunk statements in 2 sessions, no Temporal, no ledger",
      monthly: true,
      after: 'g',
      run: async () => {
        // the leaves and the shape exactly as (g) planned and recorded them
        const [nativeRun] = await listRuns(pool, { name: nativeRunName, limit: 1 });
        const leaves = await plannedBounds(pool, nativeRun.run_id);
        return bareChunkLoop(
          bareSessions,
          nativeRun.spec,
          nativeRun.shape,
          leaves,
          BARE_IMAGES,
          nativeRun.rows_planned == null ? undefined : Number(nativeRun.rows_planned),
        );
      },
    },
    {
      key: 'i',
      label: `(i) as (g), ${tailLabel}`,
      monthly: true,
      run: async (round) => (await env.backfill(`bench-native-tail-${round}`, tailSpec)).rowsRead,
    },
    {
      key: 'j',
      label: '(j) as (b), undo: off (no before-images)',
      run: async (round) => (await env.backfill(`bench-sql-off-${round}`, { ...sqlSpec, undo: 'off' })).rowsRead,
    },
  ];
  const chosen = selectMethods(methods, process.env.BENCH_METHODS);
  if (chosen.some((m) => m.monthly)) await createMonthlyDataset(pool);

  // every method once per round, in the same order: a disk stall or a noisy neighbour hits one
  // round of one method, and the median of the rounds sees through it
  const rounds: Measured[][] = [];
  const warm = [...(chosen.some((m) => ['b', 'c', 'g', 'i', 'j'].includes(m.key)) ? [sqlSpec] : []), ...(chosen.some((m) => m.key === 'd') ? [tsSpec] : [])];
  if (warm.length > 0) {
    say('warming the workers up (one small run of each transform kind, untimed)');
    await env.warmUp(warm);
  }
  for (let round = 1; round <= ROUNDS; round++) {
    say(`round ${round}/${ROUNDS}`);
    const results: Measured[] = [];
    for (const m of chosen) {
      if (m.rerun) {
        const txid = (await pool.query<{ x: string }>('SELECT txid_current()::text AS x')).rows[0].x;
        const rerun = await measure(pool, env.workerPids, m.label, () => m.run(round));
        const touched = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM bench.orders_usd WHERE xmin::text::bigint >= ($1::bigint % 4294967296)`, [
          txid,
        ]);
        results.push({ ...rerun, key: m.key, rewritten: Number(touched.rows[0].n) });
        continue;
      }
      await truncate();
      results.push({ ...(await measure(pool, env.workerPids, m.label, () => m.run(round))), key: m.key });
    }
    rounds.push(results);
  }

  const rate = (m: Measured) => m.rows / m.seconds;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const medianRate = (i: number) => median(rounds.map((r) => rate(r[i])));
  const byKey = new Map(chosen.map((m, i) => [m.key, medianRate(i)]));
  const fastest = Math.max(byKey.get('a1') ?? 0, byKey.get('a2') ?? 0);
  const ratios = headlineRatios(byKey, cutLeaves ? 'leaves cut' : 'splitTail');
  const lines = [
    `| Method | rows/s (median) | rounds | × faster single statement | WAL B/row | CPU s per 1M rows: PostgreSQL · workers · Temporal (cores busy) |`,
    `|---|---|---|---|---|---|`,
    ...rounds[0].map((first, i) => {
      const wal = median(rounds.map((r) => r[i].walBytes / r[i].rows)).toFixed(0);
      const rewritten = first.rewritten !== undefined ? ` (target rows rewritten: ${Math.max(...rounds.map((r) => r[i].rewritten ?? 0))})` : '';
      const each = rounds.map((r) => Math.round(rate(r[i]) / 1000) + 'k').join(' / ');
      const vsFastest = fastest > 0 ? (medianRate(i) / fastest).toFixed(2) : '—';
      const per = (k: 'postgres' | 'workers' | 'temporal') =>
        median(rounds.map((r) => (r[i].cpu[k] + (k === 'workers' ? r[i].cpu.bench : 0)) / (r[i].rows / 1e6))).toFixed(1);
      const busy = Math.round(100 * median(rounds.map((r) => r[i].cpu.busy)));
      return `| ${first.label} | ${Math.round(medianRate(i)).toLocaleString('en-US')} | ${each} | ${vsFastest} | ${wal}${rewritten} | ${per('postgres')} · ${per('workers')} · ${per('temporal')} (${busy} %) |`;
    }),
    '',
    ratios.map((r) => `${r.name}: ${r.value.toFixed(2)}${r.goal ? ` (${r.goal})` : ''}`).join('; '),
  ];
  const workers = process.env.BENCH_WORKERS
    ? `${process.env.BENCH_WORKERS} worker processes × ${process.env.BENCH_WORKER_ACTIVITIES || 2} activities`
    : 'one in-process worker';
  process.stdout.write(
    `\nPostgreSQL ${version}, ${ROWS} source rows (created_at ${TIME_LAYOUT}), ${PARTITIONS} partitions, chunks of ${CHUNK}, ${workers}, ${os.cpus().length} cores, ${ROUNDS} rounds, ${new Date().toISOString()}\n\n${lines.join('\n')}\n`,
  );
  if (process.env.BENCH_RESULT_FILE) writeFileSync(process.env.BENCH_RESULT_FILE, JSON.stringify({ rows: ROWS, partitions: PARTITIONS, ratios }));

  await bareSessions.end();
  await env.stop();
}

/**
 * BENCH_SIZES (`2000000:4,10000000:8`: rows and partitions): the benchmark once per size, one
 * after the other in this invocation, then the headline ratios of every size side by side, so a
 * cost that grows with the rows cannot hide behind a fixed one. Each size rebuilds the dataset.
 */
async function sizes(list: string): Promise<void> {
  const results: { rows: number; partitions: number; ratios: Ratio[] }[] = [];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'backfill-bench-sizes-'));
  for (const [i, size] of list.split(',').entries()) {
    const [rows, partitions] = size.split(':').map((x) => Number(x.trim()));
    if (!Number.isInteger(rows) || rows <= 0 || (partitions !== undefined && !Number.isInteger(partitions)))
      throw new Error(`BENCH_SIZES: "${size}" is not rows or rows:partitions`);
    const file = path.join(dir, `${i}.json`);
    say(`== ${rows.toLocaleString('en-US')} rows${partitions ? `, ${partitions} partitions` : ''}`);
    const code = await new Promise<number | null>((resolve) =>
      spawn(process.execPath, [...process.execArgv, __filename], {
        stdio: 'inherit',
        env: {
          ...process.env,
          BENCH_SIZES: '',
          BENCH_ROWS: String(rows),
          ...(partitions ? { BENCH_PARTITIONS: String(partitions) } : {}),
          BENCH_RESULT_FILE: file,
        },
      }).on('exit', resolve),
    );
    if (code !== 0) throw new Error(`the benchmark at ${rows} rows ended with ${code}`);
    results.push(JSON.parse(readFileSync(file, 'utf8')));
  }
  const names = [...new Set(results.flatMap((r) => r.ratios.map((x) => x.name)))];
  const goal = (n: string) => results.flatMap((r) => r.ratios).find((x) => x.name === n)?.goal ?? '';
  process.stdout.write(
    `\n| ratio | ${results.map((r) => `${r.rows.toLocaleString('en-US')} rows, ${r.partitions} partitions`).join(' | ')} | goal |\n` +
      `|---|${results.map(() => '---|').join('')}---|\n` +
      names
        .map(
          (n) => `| ${n} | ${results.map((r) => r.ratios.find((x) => x.name === n)?.value.toFixed(2) ?? '—').join(' | ')} | ${goal(n).replace(/^goal /, '')} |`,
        )
        .join('\n') +
      '\n',
  );
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
