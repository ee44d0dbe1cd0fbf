/**
 * Scale: how far one run goes, and what more workers buy. In one invocation, on one database
 * and one dev server started as `demo` starts it, with worker processes as deployed
 * (dist/worker.js):
 *   (workers) one spec run with 1, 2, 3, 4 worker processes, a SQL transform and a TypeScript
 *       one: throughput, each worker's share of the partitions (from the chunk log), and the
 *       CPU seconds PostgreSQL, the Temporal server and the workers spent — which of them
 *       saturates first says where more workers stop helping.
 *   (run) one run of SCALE_PARTITIONS one-row partitions (default 100,000) on three worker
 *       processes: wall time, the longest history of any workflow execution (the run's
 *       continue-as-new generations, and every partition's, from the server's visibility),
 *       and an audit of the ledger (every partition exactly one completion, a chunk for every
 *       partition, rows adding up, the target exact).
 * Prints a Markdown table per part; bench/RESULTS.md keeps them.
 * Run: npm run bench:scale   (DATABASE_URL to use a server; otherwise an embedded PostgreSQL)
 * SCALE_PARTS (workers,run), SCALE_PARTITIONS (100000), SCALE_CONCURRENCY (20),
 * SCALE_WORKER_COUNTS (1,2,3,4), BENCH_ROWS (the dataset of the worker part, 2,000,000).
 */
import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import type { temporal } from '@temporalio/proto';
import { say, startBenchEnvironment, startWorkerProcesses, untilPolling, type BenchEnvironment } from './harness';
import { COLS, createDataset, MAX_ID, ROWS, TRANSFORM, WHOLE } from './dataset';

const PARTS = (process.env.SCALE_PARTS || 'workers,run').split(',');
const PARTITIONS = Number(process.env.SCALE_PARTITIONS || 100_000);
const CONCURRENCY = Number(process.env.SCALE_CONCURRENCY || 20);
const WORKER_COUNTS = (process.env.SCALE_WORKER_COUNTS || '1,2,3,4').split(',').map(Number);
const HISTORY_LIMIT = 10_000;
const ACTIVITIES_PER_WORKER = 20;

/** CPU seconds (user + system) of the live processes whose command name matches, by group. */
function cpuSeconds(pids: { workers: number[] }): Record<'postgres' | 'temporal' | 'workers', number> {
  const ticks = 100; // USER_HZ on Linux
  const total = { postgres: 0, temporal: 0, workers: 0 };
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone since the listing
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const seconds = (Number(fields[11]) + Number(fields[12])) / ticks;
    if (pids.workers.includes(Number(entry))) total.workers += seconds;
    else if (comm === 'postgres') total.postgres += seconds;
    else if (comm === 'temporal') total.temporal += seconds;
  }
  return total;
}

/** Each worker's share of the run's partitions: the worker that wrote a partition's last chunk finished it. */
async function shares(pool: pg.Pool, name: string): Promise<number[]> {
  const { rows } = await pool.query<{ partitions: number }>(
    `SELECT count(*)::int AS partitions FROM (
       SELECT DISTINCT ON (c.partition_id) c.worker FROM backfill.chunks c JOIN backfill.runs r USING (run_id)
        WHERE r.name = $1 ORDER BY c.partition_id, c.seq DESC) last
      GROUP BY worker ORDER BY partitions DESC`,
    [name],
  );
  const total = rows.reduce((n, r) => n + r.partitions, 0);
  return rows.map((r) => r.partitions / total);
}

async function workersPart(env: BenchEnvironment): Promise<string[]> {
  const { pool } = env;
  await createDataset(pool);
  const partitionSize = Math.ceil((MAX_ID + 1) / 200);
  const spec = (name: string, transform: Record<string, unknown>) => ({
    source: { table: 'bench.orders', key: 'id' },
    partition: { by: 'range', column: 'id', size: partitionSize },
    transform: { name, version: 1, ...transform },
    target: { table: 'bench.orders_usd', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: 5000, concurrency: 12 },
  });
  const transforms = [
    { label: 'SQL', transform: { sql: TRANSFORM } },
    { label: 'TypeScript', transform: { module: path.join(__dirname, 'transforms', 'orders-usd.ts') } },
  ];
  const rows: string[] = [];
  for (const count of WORKER_COUNTS) {
    const workers = startWorkerProcesses(env.address, env.url, count, ACTIVITIES_PER_WORKER);
    try {
      await untilPolling(env.client, count);
      for (const t of transforms) {
        await pool.query('TRUNCATE bench.orders_usd');
        await pool.query('VACUUM ANALYZE bench.orders_usd');
        const name = `scale-${t.label.toLowerCase()}-${count}-${Date.now()}`;
        const pids = { workers: workers.children.map((c) => c.pid!) };
        const cpuBefore = cpuSeconds(pids);
        const started = process.hrtime.bigint();
        const result = await env.backfill(name, spec(`scale-${t.label.toLowerCase()}`, t.transform));
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const cpuAfter = cpuSeconds(pids);
        const cpu = (k: keyof typeof cpuBefore) => (cpuAfter[k] - cpuBefore[k]) / seconds;
        const share = await shares(pool, name);
        const rate = result.rowsRead / seconds;
        say(`  ${t.label}, ${count} worker(s): ${seconds.toFixed(1)} s, ${Math.round(rate).toLocaleString('en-US')} rows/s`);
        rows.push(
          `| ${t.label} | ${count} | ${seconds.toFixed(1)} | ${Math.round(rate).toLocaleString('en-US')} | ${share.map((s) => `${Math.round(s * 100)} %`).join(' / ')} | ` +
            `${cpu('postgres').toFixed(2)} | ${cpu('temporal').toFixed(2)} | ${cpu('workers').toFixed(2)} | ${(cpu('postgres') + cpu('temporal') + cpu('workers')).toFixed(2)} |`,
        );
      }
    } finally {
      await workers.stop();
    }
  }
  // the same work as one statement, for scale
  await pool.query('TRUNCATE bench.orders_usd');
  const started = process.hrtime.bigint();
  const one = await pool.query(`INSERT INTO bench.orders_usd (${COLS}) ${WHOLE}`);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return [
    `${ROWS.toLocaleString('en-US')} rows in 200 partitions, chunks of 5,000, concurrency 12, ${ACTIVITIES_PER_WORKER} activity slots per worker; ` +
      `one INSERT … SELECT of the same work: ${seconds.toFixed(1)} s, ${Math.round((one.rowCount ?? 0) / seconds).toLocaleString('en-US')} rows/s.`,
    '',
    '| transform | workers | seconds | rows/s | partitions per worker | CPU cores busy: PostgreSQL | Temporal server | workers | all |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ];
}

async function runPart(env: BenchEnvironment): Promise<string[]> {
  const { pool } = env;
  await pool.query(`DROP SCHEMA IF EXISTS bench_scale CASCADE; CREATE SCHEMA bench_scale;
    CREATE TABLE bench_scale.tiny (id bigint PRIMARY KEY, v integer NOT NULL);
    INSERT INTO bench_scale.tiny SELECT g, g % 97 FROM generate_series(1, ${PARTITIONS}) g;
    CREATE TABLE bench_scale.tiny_out (id bigint PRIMARY KEY, v2 integer);
    ANALYZE bench_scale.tiny;`);
  const workers = startWorkerProcesses(env.address, env.url, 3, ACTIVITIES_PER_WORKER);
  try {
    await untilPolling(env.client, 3);
    const name = `scale-run-${PARTITIONS}-${Date.now()}`;
    const started = Date.now();
    const progress = setInterval(() => {
      pool
        .query<{ done: string }>(
          "SELECT count(*) AS done FROM backfill.partitions p JOIN backfill.runs r USING (run_id) WHERE r.name = $1 AND p.status = 'succeeded'",
          [name],
        )
        .then(({ rows }) => say(`  ${rows[0].done} of ${PARTITIONS} partitions after ${Math.round((Date.now() - started) / 1000)} s`))
        .catch(() => undefined);
    }, 60_000);
    let result;
    try {
      result = await env.backfill(name, {
        source: { table: 'bench_scale.tiny', key: 'id' },
        partition: { by: 'range', column: 'id', size: 1 },
        transform: { name: 'tiny', version: 1, sql: 'SELECT id, v * 2 AS v2 FROM chunk' },
        target: { table: 'bench_scale.tiny_out', key: ['id'], mode: 'upsert' },
        limits: { chunkSize: 1000, concurrency: CONCURRENCY },
      });
    } finally {
      clearInterval(progress);
    }
    const seconds = (Date.now() - started) / 1000;

    // every execution of the run's workflow, following continue-as-new
    const generations: number[] = [];
    let runId: string | undefined = result.firstRunId;
    for (;;) {
      const events: temporal.api.history.v1.IHistoryEvent[] = (await env.client.workflow.getHandle(result.workflowId, runId).fetchHistory()).events ?? [];
      generations.push(events.length);
      runId = events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
      if (!runId) break;
    }
    // every other workflow of the run (its partitions), by the server's own count of their events
    const query = (extra: string) => `WorkflowId STARTS_WITH "${result.workflowId}" ${extra}`;
    const children = (await env.client.workflow.count(query('AND WorkflowType = "backfillPartitionWorkflow"'))).count;
    const overLimit = (await env.client.workflow.count(query(`AND HistoryLength >= ${HISTORY_LIMIT}`))).count;
    let longestChild = 0;
    for await (const w of env.client.workflow.list({ query: query('AND WorkflowType = "backfillPartitionWorkflow"'), pageSize: 1000 })) {
      longestChild = Math.max(longestChild, w.historyLength);
    }

    const { rows: audit } = await pool.query<Record<string, string>>(
      `WITH r AS (SELECT run_id FROM backfill.runs WHERE name = $1)
       SELECT (SELECT count(*) FROM backfill.partitions WHERE run_id = (SELECT run_id FROM r)) AS partitions,
              (SELECT count(*) FROM backfill.partitions WHERE run_id = (SELECT run_id FROM r) AND (status <> 'succeeded' OR completions <> 1)) AS not_once,
              (SELECT count(*) FROM backfill.partitions p WHERE run_id = (SELECT run_id FROM r)
                 AND p.chunks <> (SELECT count(*) FROM backfill.chunks c WHERE c.run_id = p.run_id AND c.partition_id = p.partition_id)) AS chunk_mismatch,
              (SELECT count(*) FROM backfill.chunks WHERE run_id = (SELECT run_id FROM r)) AS chunks,
              (SELECT coalesce(sum(rows_read), 0) FROM backfill.partitions WHERE run_id = (SELECT run_id FROM r)) AS rows_read,
              (SELECT count(*) FROM bench_scale.tiny t JOIN bench_scale.tiny_out o USING (id) WHERE o.v2 = t.v * 2) AS exact,
              (SELECT count(*) FROM bench_scale.tiny_out) AS target`,
      [name],
    );
    const a = audit[0];
    const share = await shares(pool, name);
    const problems = [
      Number(a.partitions) !== PARTITIONS && `${a.partitions} partitions in the ledger`,
      Number(a.not_once) > 0 && `${a.not_once} partitions not succeeded exactly once`,
      Number(a.chunk_mismatch) > 0 && `${a.chunk_mismatch} partitions whose chunk count disagrees with the chunk log`,
      Number(a.rows_read) !== PARTITIONS && `${a.rows_read} rows read`,
      (Number(a.exact) !== PARTITIONS || Number(a.target) !== PARTITIONS) && `target: ${a.exact} exact of ${a.target}`,
      overLimit > 0 && `${overLimit} workflow executions reached ${HISTORY_LIMIT} events`,
      children !== PARTITIONS && `${children} partition workflows, not ${PARTITIONS}`,
    ].filter(Boolean);
    if (problems.length > 0) process.exitCode = 1;
    return [
      '| partitions | concurrency | workers | wall time | per partition | run executions (continue-as-new) | longest run execution | partition workflows | longest partition history | executions ≥ 10,000 events | ledger | partitions per worker |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|',
      `| ${PARTITIONS.toLocaleString('en-US')} | ${CONCURRENCY} | 3 | ${(seconds / 60).toFixed(1)} min | ${((seconds * 1000) / PARTITIONS).toFixed(1)} ms | ${generations.length} | ` +
        `${Math.max(...generations).toLocaleString('en-US')} events | ${children.toLocaleString('en-US')} | ${longestChild} events | ${overLimit} | ` +
        `${problems.length === 0 ? `every partition one completion, ${Number(a.chunks).toLocaleString('en-US')} chunks, ${Number(a.rows_read).toLocaleString('en-US')} rows, target exact` : problems.join('; ')} | ` +
        `${share.map((s) => `${Math.round(s * 100)} %`).join(' / ')} |`,
    ];
  } finally {
    await workers.stop();
  }
}

async function main(): Promise<void> {
  const env = await startBenchEnvironment({ dataset: false, asDemo: true, noWorkers: true });
  try {
    const workers = PARTS.includes('workers') ? await workersPart(env) : [];
    const run = PARTS.includes('run') ? await runPart(env) : [];
    process.stdout.write(
      `\nPostgreSQL ${env.version}, dev server as \`demo\` starts it, worker processes (dist/worker.js), ${os.cpus().length} cores, ${new Date().toISOString()}\n\n` +
        `${workers.join('\n')}\n\n${run.join('\n')}\n`,
    );
  } finally {
    await env.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
