/**
 * How the cost of a backfill grows on Temporal's production server (PostgreSQL persistence, SQL
 * visibility; the version docker-compose.yml deploys) against the dev server every other
 * benchmark uses, in one invocation on one PostgreSQL, the same workers and dataset:
 *
 *   (d) the demo spec end to end (91 day partitions, ~1.16M rows, chunks of 25,000)
 *   (b) the 2M-row bench spec (BENCH_PARTITIONS range partitions, chunks of BENCH_CHUNK)
 *   (t) BENCH_TINY one-row partitions at concurrency 20: orchestration alone
 *   (f3), (f4), (f5) Temporal alone, BENCH_TINY no-op items at concurrency 20 (bench/fanout):
 *       a workflow started per item; one per BENCH_BATCH items (10), each item a local activity
 *       reporting by signal; the same with one signal a workflow. What batching partitions into
 *       workflows would save, server by server (part f)
 *
 * For each: the wall time, the time `start` took to return (its checks and registration), and
 * per-unit figures (rows/s, ms of slot time per partition); then production / dev. Each server
 * runs every part BENCH_ROUNDS times (3); the table gives medians and every round.
 * Run: npm run bench:servers   (DATABASE_URL to use a server; BENCH_TINY (1000), BENCH_SERVERS
 * (dev,production), BENCH_PARTS (d,b,t; f for the floors), BENCH_BATCH (10), BENCH_ROUNDS (3);
 * with BENCH_ROWS=20000000 BENCH_PARTS=b the scaling row)
 */
import type pg from 'pg';
import { Context } from '@temporalio/activity';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { FanOutInput } from './fanout/workflows';
import { startRun, waitForResult } from '../src/operations';
import { ensureDemoData } from '../src/dev/demo-data';
import { MAX_ID, ROWS, TRANSFORM } from './dataset';
import { say, startBenchEnvironment, type BenchEnvironment } from './harness';
import { createTinyTable, tinySpec } from './tiny';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';

const TINY = Number(process.env.BENCH_TINY || 1000);
const PARTITIONS = Number(process.env.BENCH_PARTITIONS || 4);
const CHUNK = Number(process.env.BENCH_CHUNK || 100_000);
/** The spec `npm run demo` runs. */
const demoSpec = parse(readFileSync(path.join(__dirname, '..', 'examples', 'orders-usd.yaml'), 'utf8')) as Record<string, unknown>;
/** Which runs: d, b, t (default all); `BENCH_PARTS=b BENCH_ROWS=20000000` is the scaling row. */
const PARTS = new Set((process.env.BENCH_PARTS || 'd,b,t').split(','));
const SERVERS = (process.env.BENCH_SERVERS || 'dev,production').split(',') as ('dev' | 'production')[];
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const BATCH = Number(process.env.BENCH_BATCH || 10);

interface Measured {
  seconds: number;
  startSeconds: number;
  rows: number;
  partitions: number;
  concurrency: number;
}

/** A spec run to completion, timed from the call to `start` to the run's result. */
async function timedRun(env: BenchEnvironment, name: string, body: Record<string, unknown>): Promise<Measured> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'backfill-bench-servers-'));
  const file = path.join(dir, `${name}.yaml`);
  writeFileSync(file, stringify({ name, reason: 'benchmark', database: 'BENCH_DATABASE_URL', ...body }));
  const t0 = process.hrtime.bigint();
  const started = await startRun({ client: env.client, taskQueue: 'bench' }, { specFile: file, actor: 'bench' });
  const t1 = process.hrtime.bigint();
  const result = await waitForResult(started.handle);
  const t2 = process.hrtime.bigint();
  if (result.status !== 'succeeded') throw new Error(`bench run ${started.runId} ended ${result.status}`);
  return {
    seconds: Number(t2 - t0) / 1e9,
    startSeconds: Number(t1 - t0) / 1e9,
    rows: result.rowsRead,
    partitions: result.partitions.total,
    concurrency: (body.limits as { concurrency: number }).concurrency,
  };
}

/** Every part, BENCH_ROUNDS times in turn on one server: each part's rounds, in order. */
async function measureOn(server: 'dev' | 'production'): Promise<Record<string, Measured[]>> {
  const env = await startBenchEnvironment({ server });
  try {
    const rounds: Record<string, Measured[]> = {};
    for (let round = 1; round <= ROUNDS; round++) {
      say(`  round ${round}/${ROUNDS}`);
      for (const [key, m] of Object.entries(await measureRound(env, server, `${Date.now()}-${round}`))) (rounds[key] ??= []).push(m);
    }
    return rounds;
  } finally {
    await env.stop();
  }
}

async function measureRound(env: BenchEnvironment, server: 'dev' | 'production', stamp: string): Promise<Record<string, Measured>> {
  const { pool } = env;
  const out: Record<string, Measured> = {};
  if (PARTS.has('d')) {
    await ensureDemoData(pool, say);
    await pool.query('TRUNCATE demo.orders_usd');
    const { name: _n, reason: _r, database: _d, ...demo } = demoSpec;
    out.d = await timedRun(env, `servers-demo-${server}-${stamp}`, demo);
    say(`  ${server} (d): ${out.d.seconds.toFixed(2)} s`);
  }
  if (PARTS.has('b')) {
    await truncate(pool, 'bench.orders_usd');
    out.b = await timedRun(env, `servers-2m-${server}-${stamp}`, {
      source: { table: 'bench.orders', key: 'id' },
      partition: { by: 'range', column: 'id', size: Math.ceil((MAX_ID + 1) / PARTITIONS) },
      transform: { name: 'bench-sql', version: 1, sql: TRANSFORM },
      target: { table: 'bench.orders_usd', key: ['id'], mode: 'upsert' },
      limits: { chunkSize: CHUNK, concurrency: 2 },
    });
    say(`  ${server} (b): ${out.b.seconds.toFixed(2)} s`);
  }
  if (PARTS.has('t')) {
    await createTinyTable(pool, TINY);
    out.t = await timedRun(env, `servers-tiny-${server}-${stamp}`, tinySpec(20));
    say(`  ${server} (t): ${out.t.seconds.toFixed(2)} s`);
  }
  if (PARTS.has('f')) {
    Object.assign(out, await floors(env, `${server}-${stamp}`));
    say(`  ${server} (f3): ${out.f3.seconds.toFixed(2)} s, (f4): ${out.f4.seconds.toFixed(2)} s, (f5): ${out.f5.seconds.toFixed(2)} s`);
  }
  return out;
}

/** Temporal's floor on this server: BENCH_TINY no-op items at concurrency 20, a workflow per item, then per BATCH items. */
async function floors(env: BenchEnvironment, stamp: string): Promise<Record<'f3' | 'f4' | 'f5', Measured>> {
  const connection = await NativeConnection.connect({ address: env.address });
  const start = (workflowType: string, workflowId: string, args: unknown[]) =>
    Context.current().client.workflow.start(workflowType, { taskQueue: 'bench-fanout', workflowId, args });
  const worker = await Worker.create({
    connection,
    taskQueue: 'bench-fanout',
    workflowsPath: require.resolve('./fanout/workflows'),
    activities: {
      noop: async () => undefined,
      report: async (parentId: string, items?: number) => Context.current().client.workflow.getHandle(parentId).signal('childDone', items),
      startIndependent: async (workflowId: string, parentId: string) => void (await start('signallingChild', workflowId, [parentId])),
      startBatch: async (workflowId: string, parentId: string, items: number, together: boolean) =>
        void (await start(together ? 'reportedBatchChild' : 'batchChild', workflowId, [parentId, items])),
    },
    maxConcurrentActivityTaskExecutions: 20,
  });
  const running = worker.run();
  try {
    const floor = async (workflow: 'startedFanOut' | 'batchedFanOut' | 'reportedFanOut', batch: number): Promise<Measured> => {
      const prefix = `${workflow}-${stamp}`;
      const t0 = process.hrtime.bigint();
      const handle = await env.client.workflow.start(workflow, {
        taskQueue: 'bench-fanout',
        workflowId: prefix,
        args: [{ children: TINY, concurrency: 20, prefix, batch } satisfies FanOutInput],
      });
      await handle.result();
      return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, startSeconds: 0, rows: 0, partitions: TINY, concurrency: 20 };
    };
    return { f3: await floor('startedFanOut', 1), f4: await floor('batchedFanOut', BATCH), f5: await floor('reportedFanOut', BATCH) };
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
  }
}

/** The round with the median wall time (the lower middle of an even count). */
function medianRound(rounds: Measured[] | undefined): Measured | undefined {
  if (!rounds || rounds.length === 0) return undefined;
  return [...rounds].sort((a, b) => a.seconds - b.seconds)[Math.floor((rounds.length - 1) / 2)];
}

async function truncate(pool: pg.Pool, table: string): Promise<void> {
  await pool.query(`TRUNCATE ${table}`);
  await pool.query(`VACUUM ANALYZE ${table}`);
}

async function main(): Promise<void> {
  const results: Partial<Record<'dev' | 'production', Record<string, Measured[]>>> = {};
  for (const server of SERVERS) {
    say(`== ${server} server`);
    results[server] = await measureOn(server);
  }
  const dev = results.dev;
  const prod = results.production;
  const labels: [string, string][] = [
    ['d', '(d) demo spec, day partitions'],
    ['b', `(b) ${ROWS.toLocaleString('en-US')}-row bench spec, ${PARTITIONS} range partitions`],
    ['t', `(t) ${TINY.toLocaleString('en-US')} one-row partitions, concurrency 20`],
    ['f3', `(f3) Temporal alone: ${TINY.toLocaleString('en-US')} no-op items, a workflow each, concurrency 20`],
    ['f4', `(f4) Temporal alone: the same, ${BATCH} items a workflow, a signal each`],
    ['f5', `(f5) Temporal alone: the same, ${BATCH} items a workflow, one signal for them`],
  ];
  const cell = (m: Measured | undefined, f: (m: Measured) => string) => (m ? f(m) : '—');
  const rate = (m: Measured) => `${Math.round(m.rows / m.seconds).toLocaleString('en-US')} rows/s`;
  const slot = (m: Measured) => `${((m.seconds * 1000 * m.concurrency) / m.partitions).toFixed(0)} ms`;
  const every = (rounds: Measured[] | undefined) => (rounds ? rounds.map((m) => m.seconds.toFixed(2)).join(' / ') : '—');
  const lines = [
    `${ROUNDS} round(s) on each server; seconds and per-unit figures are the median round's, (start) the time \`start\` took in it.`,
    '',
    '| run | partitions | dev: seconds (start) | production: seconds (start) | dev per unit | production per unit | production / dev | dev rounds, s | production rounds, s |',
    '|---|---|---|---|---|---|---|---|---|',
    ...labels
      .filter(([key]) => PARTS.has(key[0]))
      .map(([key, label]) => {
        const a = medianRound(dev?.[key]);
        const b = medianRound(prod?.[key]);
        const unit = key === 'b' || key === 'd' ? rate : slot;
        const ratio = a && b ? (b.seconds / a.seconds).toFixed(2) : '—';
        return (
          `| ${label} | ${(a ?? b)?.partitions ?? '—'} | ${cell(a, (m) => `${m.seconds.toFixed(2)} (${m.startSeconds.toFixed(2)})`)} | ` +
          `${cell(b, (m) => `${m.seconds.toFixed(2)} (${m.startSeconds.toFixed(2)})`)} | ${cell(a, unit)} | ${cell(b, unit)} | ${ratio} | ${every(dev?.[key])} | ${every(prod?.[key])} |`
        );
      }),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
