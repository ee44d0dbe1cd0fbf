/**
 * Benchmark: small partitions, where orchestration rather than the write dominates. In one
 * invocation, on one database and one dev server started as `demo` starts it:
 *   (s) the demo spec's work as one guarded MERGE (its transform joined in, the same
 *       IS DISTINCT FROM guard), into the empty target
 *   (d) the demo spec (examples/orders-usd.yaml: day partitions) end to end
 *   (h) the same spec with hourly partitions
 *   (f1), (f2), (f3) bare fan-outs (bench/fanout: a workflow per item, one no-op activity
 *       each; a child completing into the parent, a child reporting by signal, or a workflow
 *       of its own started by the parent's local activity, reporting by signal) and a backfill of the same
 *       number of one-row partitions, at concurrency 6 and 20: wall time per partition side
 *       by side, the backfill's chunk work apart, and the history events and bytes each
 *       spends per partition.
 * Prints a Markdown table per part; bench/RESULTS.md keeps them.
 * Run: npm run bench:small   (DATABASE_URL to use a server; otherwise an embedded PostgreSQL)
 * BENCH_ROUNDS (3), BENCH_TINY (1000: the one-row partition counts, comma-separated), BENCH_SERVER
 * (dev; `production` runs everything on Temporal's own server, as bench:servers does),
 * BENCH_CONCURRENCY (6,20), BENCH_PARTS (demo,hourly,tiny: which parts run; BENCH_SKIP_DEMO=1
 * leaves out demo and hourly, as it always did).
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NativeConnection, Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { parse } from 'yaml';
import { ensureDemoData } from '../src/dev/demo-data';
import { say, startBenchEnvironment, type BenchEnvironment } from './harness';
import { createTinyTable, tinySpec } from './tiny';
import { Context } from '@temporalio/activity';
import type { FanOutInput } from './fanout/workflows';

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const TINY = (process.env.BENCH_TINY || '1000').split(',').map(Number);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY || '6,20').split(',').map(Number);
/** `production`: Temporal's own server on PostgreSQL persistence, as compose deploys it, instead of the dev server. */
const SERVER = process.env.BENCH_SERVER === 'production' ? 'production' : 'dev';
const PARTS = new Set((process.env.BENCH_PARTS || (process.env.BENCH_SKIP_DEMO ? 'tiny' : 'demo,hourly,tiny')).split(',').map((p) => p.trim()));
const unknownParts = [...PARTS].filter((p) => !['demo', 'hourly', 'tiny'].includes(p));
if (unknownParts.length > 0) {
  process.stderr.write(`BENCH_PARTS names ${unknownParts.join(', ')}; use a comma-separated list of demo, hourly and tiny\n`);
  process.exit(2);
}

const demoSpec = parse(readFileSync(path.join(__dirname, '..', 'examples', 'orders-usd.yaml'), 'utf8')) as { partition: Record<string, unknown> } & Record<
  string,
  unknown
>;

const ONE_MERGE = `
  MERGE INTO demo.orders_usd t
  USING (SELECT c.id, c.currency, round(c.amount_cents * r.usd_rate / 100.0, 2) AS amount_usd
           FROM (SELECT * FROM demo.orders WHERE status <> 'test') c LEFT JOIN demo.fx_rates r USING (currency)) o
     ON t.id = o.id
  WHEN MATCHED AND (t.currency, t.amount_usd) IS DISTINCT FROM (o.currency, o.amount_usd) THEN UPDATE SET currency = o.currency, amount_usd = o.amount_usd
  WHEN NOT MATCHED THEN INSERT (id, currency, amount_usd) VALUES (o.id, o.currency, o.amount_usd)`;

interface Timed {
  seconds: number;
  rows: number;
}

async function timed(work: () => Promise<number>): Promise<Timed> {
  const started = process.hrtime.bigint();
  const rows = await work();
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, rows };
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function demoPart(env: BenchEnvironment): Promise<string[]> {
  const { pool } = env;
  await ensureDemoData(pool, say);
  const reset = () => pool.query('TRUNCATE demo.orders_usd').then(() => pool.query('VACUUM ANALYZE demo.orders_usd'));
  const { name: _name, reason: _reason, database: _database, ...body } = demoSpec;
  const spec = (size: string) => ({ ...body, partition: { ...demoSpec.partition, size } });
  const DAY = '(d) backfill, demo spec (day partitions)';
  const HOUR = '(h) backfill, hourly partitions';
  const partitions = new Map<string, number>();
  const backfill = async (label: string, name: string, size: string) => {
    const result = await env.backfill(`${name}-${Date.now()}`, spec(size));
    partitions.set(label, result.partitions.total);
    return result.rowsRead;
  };
  const methods: { label: string; run: () => Promise<number> }[] = [
    { label: '(s) one MERGE statement', run: async () => (await pool.query(ONE_MERGE)).rowCount ?? 0 },
    ...(PARTS.has('demo') ? [{ label: DAY, run: () => backfill(DAY, 'small-day', '1 day') }] : []),
    ...(PARTS.has('hourly') ? [{ label: HOUR, run: () => backfill(HOUR, 'small-hour', '1 hour') }] : []),
  ];
  const results: Timed[][] = methods.map(() => []);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [i, m] of methods.entries()) {
      await reset();
      const t = await timed(() => m.run());
      say(`  round ${round} ${m.label}: ${t.seconds.toFixed(2)} s, ${Math.round(t.rows / t.seconds).toLocaleString('en-US')} rows/s`);
      results[i].push(t);
    }
  }
  const rate = (i: number) => median(results[i].map((t) => t.rows / t.seconds));
  return [
    '| Method | partitions | seconds (median) | rows/s (median) | rounds | × the statement |',
    '|---|---|---|---|---|---|',
    ...methods.map(
      (m, i) =>
        `| ${m.label} | ${partitions.get(m.label) ?? '—'} | ${median(results[i].map((t) => t.seconds)).toFixed(2)} | ${Math.round(rate(i)).toLocaleString('en-US')} | ` +
        `${results[i].map((t) => t.seconds.toFixed(2) + ' s').join(' / ')} | ${(rate(i) / rate(0)).toFixed(2)} |`,
    ),
  ];
}

/** One execution's history, with its events and encoded bytes. */
async function executionHistory(env: BenchEnvironment, workflowId: string, runId?: string) {
  const history = await env.client.workflow.getHandle(workflowId, runId).fetchHistory();
  return { history, size: { events: history.events?.length ?? 0, bytes: temporal.api.history.v1.History.encode(history).finish().length } };
}

/** Events and encoded bytes of every execution of a workflow, following continue-as-new. */
async function historySize(env: BenchEnvironment, workflowId: string, firstRunId?: string): Promise<{ events: number; bytes: number; executions: number }> {
  let runId = firstRunId;
  let events = 0;
  let bytes = 0;
  let executions = 0;
  for (;;) {
    const { history, size } = await executionHistory(env, workflowId, runId);
    executions++;
    events += size.events;
    bytes += size.bytes;
    const last = history.events?.[history.events.length - 1];
    const next = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (!next) return { events, bytes, executions };
    runId = next;
  }
}

/**
 * The history a partition costs in workflows of its own, on average: its own workflow's, or its
 * share of its group's (small partitions run up to ten to a workflow), every one under the run's id.
 */
async function partitionHistories(env: BenchEnvironment, runWorkflowId: string, partitions: number): Promise<{ events: number; bytes: number }> {
  let events = 0;
  let bytes = 0;
  for await (const w of env.client.workflow.list({ query: `WorkflowId STARTS_WITH "${runWorkflowId}/"` })) {
    // visibility lists every execution, a continued one's too: each is counted once, alone
    const { size } = await executionHistory(env, w.workflowId, w.runId);
    events += size.events;
    bytes += size.bytes;
  }
  return { events: events / partitions, bytes: bytes / partitions };
}

async function tinyPart(env: BenchEnvironment): Promise<string[]> {
  const { pool } = env;
  const connection = await NativeConnection.connect({ address: env.address });
  const fanout = await Worker.create({
    connection,
    taskQueue: 'bench-fanout',
    workflowsPath: require.resolve('./fanout/workflows'),
    activities: {
      noop: async () => undefined,
      report: async (parentId: string) => Context.current().client.workflow.getHandle(parentId).signal('childDone'),
      startIndependent: async (workflowId: string, parentId: string) =>
        void (await Context.current().client.workflow.start('signallingChild', { taskQueue: 'bench-fanout', workflowId, args: [parentId] })),
    },
    maxConcurrentActivityTaskExecutions: 20,
  });
  const running = fanout.run();
  const rows: string[] = [];
  try {
    for (const n of TINY) {
      await createTinyTable(pool, n);
      for (const c of CONCURRENCIES) {
        const floor = async (workflow: 'bareFanOut' | 'signalFanOut' | 'startedFanOut') => {
          const prefix = `${workflow}-${n}-${c}-${Date.now()}`;
          let runId = '';
          const t = await timed(async () => {
            const handle = await env.client.workflow.start(workflow, {
              taskQueue: 'bench-fanout',
              workflowId: prefix,
              args: [{ children: n, concurrency: c, prefix } satisfies FanOutInput],
            });
            runId = handle.firstExecutionRunId;
            return handle.result();
          });
          const parent = await historySize(env, prefix, runId);
          const child = await historySize(env, `${prefix}-0`);
          return { t, events: parent.events / n + child.events, bytes: parent.bytes / n + child.bytes };
        };
        const bare = await floor('bareFanOut');
        const signalled = await floor('signalFanOut');
        const started = await floor('startedFanOut');
        await pool.query('TRUNCATE bench_small.tiny_out');
        const name = `tiny-${n}-${c}-${Date.now()}`;
        let workflowId = '';
        let firstRunId = '';
        const run = await timed(async () => {
          const r = await env.backfill(name, tinySpec(c));
          workflowId = r.workflowId;
          firstRunId = r.firstRunId;
          return r.rowsRead;
        });
        const { rows: ledger } = await pool.query<{ partitions: string; chunk_ms: string }>(
          `SELECT count(DISTINCT p.partition_id) AS partitions, coalesce(sum(c.duration_ms), 0) AS chunk_ms
             FROM backfill.runs r JOIN backfill.partitions p USING (run_id) LEFT JOIN backfill.chunks c ON c.run_id = p.run_id AND c.partition_id = p.partition_id
            WHERE r.name = $1`,
          [name],
        );
        const parts = Number(ledger[0].partitions);
        const runParent = await historySize(env, workflowId, firstRunId);
        const runChild = await partitionHistories(env, workflowId, parts);
        // slot time per partition: wall time × concurrency / partitions
        const perBare = (bare.t.seconds * 1000 * c) / n;
        const perSignalled = (signalled.t.seconds * 1000 * c) / n;
        const perStarted = (started.t.seconds * 1000 * c) / n;
        const perRun = (run.seconds * 1000 * c) / parts;
        const chunkPer = Number(ledger[0].chunk_ms) / parts;
        say(
          `  ${n} × c${c}: bare ${bare.t.seconds.toFixed(1)} s, by signal ${signalled.t.seconds.toFixed(1)} s, started alone ${started.t.seconds.toFixed(1)} s, backfill ${run.seconds.toFixed(1)} s`,
        );
        const history = (h: { events: number; bytes: number }) => `${h.events.toFixed(1)} ev, ${h.bytes.toFixed(0)} B`;
        rows.push(
          `| ${n.toLocaleString('en-US')} | ${c} | ${perBare.toFixed(0)} ms | ${perSignalled.toFixed(0)} ms | ${perStarted.toFixed(0)} ms | ${perRun.toFixed(0)} ms (chunk ${chunkPer.toFixed(0)} ms) | ` +
            `${(perRun / perBare).toFixed(2)} / ${(perRun / perSignalled).toFixed(2)} | ${history(bare)} | ${history(signalled)} | ${history(started)} | ` +
            `${history({ events: runParent.events / parts + runChild.events, bytes: runParent.bytes / parts + runChild.bytes })} |`,
        );
      }
    }
  } finally {
    fanout.shutdown();
    await running;
    await connection.close();
  }
  return [
    '| partitions | concurrency | slot time per child: (f1) completing into the parent | (f2) reporting by signal | (f3) started alone, reporting by signal | backfill: slot time per partition | backfill × (f1) / (f2) | history per child (parent share + child): (f1) | (f2) | (f3) | backfill, per partition |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ];
}

async function main(): Promise<void> {
  const env = await startBenchEnvironment({ dataset: false, asDemo: true, workerActivities: 20, server: SERVER });
  try {
    const demo = PARTS.has('demo') || PARTS.has('hourly') ? await demoPart(env) : [];
    const tiny = PARTS.has('tiny') ? await tinyPart(env) : [];
    process.stdout.write(
      `\nPostgreSQL ${env.version}, ${SERVER === 'production' ? "the production server (compose's dynamic config)" : 'dev server as `demo` starts it'}, one in-process worker, ${os.cpus().length} cores, ${ROUNDS} rounds, ${new Date().toISOString()}\n\n` +
        `${demo.join('\n')}\n\n${tiny.join('\n')}\n`,
    );
  } finally {
    await env.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
