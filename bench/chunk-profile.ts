/**
 * Where (b)'s time goes, beside (e)'s: the bench spec run end to end on two worker processes of
 * one activity each (as `npm run bench` runs it), then the bare chunk loop over the same
 * partitions, with every node-postgres query of both timed by statement
 * (bench/profile/pg-timing.cjs, loaded into the workers with NODE_OPTIONS). Prints, per chunk,
 * the time each kind of statement took in each, and the time the two sessions spent outside
 * any statement (Node, Temporal, waiting): the attribution table of bench/RESULTS.md. Then
 * what the median round's (b) did outside its chunks, from its Temporal history (run-history.ts).
 * Run: npm run bench:profile   (BENCH_ROWS, BENCH_PARTITIONS, BENCH_CHUNK as for npm run bench)
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpuNow, cpuSince, type CpuUse } from './cpu';
import os from 'node:os';
import path from 'node:path';
import { bareChunkLoop, openBareSessions } from './bare-chunk-loop';
import { BARE_SHAPE, bareBench, CHUNK, PARTITIONS, sqlBenchSpec } from './bench-spec';
import { ROWS } from './dataset';
import { say, startBenchEnvironment, startWorkerProcesses } from './harness';
import { hopRows, runHops, type RunHops } from './run-history';

type Timings = Record<string, { count: number; ms: number }>;

const PRELOAD = path.join(__dirname, 'profile', 'pg-timing.cjs');
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
/** Where the bare loop keeps its before-images, as npm run bench's (e) does. */
const BARE_IMAGES = 'bench.bare_images';
require(PRELOAD);
const timing = (globalThis as unknown as { __pgTiming: { reset(): void; snapshot(): Timings } }).__pgTiming;

/** Statement kinds, first match wins; anything else is shown by its opening words. */
const KINDS: [string, RegExp][] = [
  ['BEGIN', /^BEGIN/],
  ['COMMIT (+ RESET ALL)', /COMMIT/],
  ['timeouts (set_config)', /set_config\('(lock|statement)_timeout/],
  ['lock the partition row (ledger)', /FROM backfill\.partitions .*FOR UPDATE/],
  ['checkpoint (ledger)', /^UPDATE backfill\.partitions/],
  ['chunk log (ledger)', /^INSERT INTO backfill\.chunks/],
  ['run control (ledger)', /backfill\.runs/],
  ['other ledger', /backfill\./],
  ['output table', /^CREATE TEMP TABLE/],
  ['bounds', /^WITH nth AS/],
  ['fill the output table (the transform)', /^WITH chunk AS \(SELECT s\.\* .*INSERT INTO pg_temp\./],
  ['write the target (MERGE)', /^MERGE INTO/],
  ['the output key range (min and max, once a chunk)', /^SELECT min\(.*\)::text AS lo/],
  ['reconcile (sample)', /^SELECT count\(\*\) FILTER \(WHERE t\./],
  ['before-images', /^WITH img AS \(INSERT INTO/],
  ['counts over the source (the scope at registration, rows outside the plan)', /^SELECT count\(\*\) AS n FROM /],
  ['sampled recompute (partition and final checks)', /^WITH o AS MATERIALIZED/],
];

function kindOf(statement: string): string {
  return KINDS.find(([, re]) => re.test(statement))?.[0] ?? statement.slice(0, 60);
}

function byKind(t: Timings): Map<string, { count: number; ms: number }> {
  const out = new Map<string, { count: number; ms: number }>();
  for (const [statement, s] of Object.entries(t)) {
    const k = kindOf(statement);
    const o = out.get(k) ?? { count: 0, ms: 0 };
    out.set(k, { count: o.count + s.count, ms: o.ms + s.ms });
  }
  return out;
}

function merge(files: Timings[]): Timings {
  const out: Timings = {};
  for (const f of files) for (const [k, s] of Object.entries(f)) out[k] = { count: (out[k]?.count ?? 0) + s.count, ms: (out[k]?.ms ?? 0) + s.ms };
  return out;
}

interface Measured {
  wallMs: number;
  chunks: number;
  timings: Timings;
  cpu: CpuUse;
  runId?: string;
  hops?: RunHops;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'backfill-profile-'));
  // for the worker processes only: this process has the timing already
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --require ${PRELOAD}`.trim();
  process.env.BENCH_PG_TIMING_DIR = dir;
  const env = await startBenchEnvironment({ noWorkers: true });
  const bareSessions = openBareSessions(env.url);
  const { pool } = env;
  // as npm run bench measures: an empty target, vacuumed, and a checkpoint so that none falls due mid-measurement by chance
  const truncate = () =>
    pool
      .query('TRUNCATE bench.orders_usd')
      .then(() => pool.query('VACUUM ANALYZE bench.orders_usd'))
      .then(() => pool.query('CHECKPOINT'));
  const workers = startWorkerProcesses(env.address, env.url, 2, 1);
  const pids = workers.children.map((c) => c.pid!);
  /** What the workers counted since the last call. */
  const collect = async (): Promise<Timings[]> => {
    for (const f of readdirSync(dir)) rmSync(path.join(dir, f));
    for (const w of workers.children) w.kill('SIGWINCH');
    await new Promise((resolve) => setTimeout(resolve, 500));
    return readdirSync(dir).map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as Timings);
  };

  // a first run warms the workers (workflow bundle, pools, caches) as a long-lived deployment is warm
  await truncate();
  await env.backfill(`profile-warm-${Date.now()}`, sqlBenchSpec());
  await collect();
  const { spec, bounds } = bareBench();
  const rounds: { b: Measured; e: Measured }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    await truncate();
    timing.reset(); // from here, this process's queries are start's checks
    let cpu = cpuNow(pids);
    let started = process.hrtime.bigint();
    const calledAt = Date.now();
    const run = await env.backfill(`profile-b-${Date.now()}`, sqlBenchSpec());
    const wallB = Number(process.hrtime.bigint() - started) / 1e6;
    // while the dev server still holds the history
    const hops = await runHops(env.client, run.workflowId, run.firstRunId, calledAt, Date.now());
    const cpuB = cpuSince(cpu, pids, wallB / 1000);
    const here = timing.snapshot();
    const b = merge([here, ...(await collect())]);
    const chunksB = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM backfill.chunks WHERE run_id = $1', [run.runId])).rows[0].n;

    await truncate();
    timing.reset();
    cpu = cpuNow(pids);
    started = process.hrtime.bigint();
    // with its before-images, as every run takes them by default and npm run bench's (e) does
    await bareChunkLoop(bareSessions, spec, BARE_SHAPE, bounds, BARE_IMAGES);
    const wallE = Number(process.hrtime.bigint() - started) / 1e6;
    const cpuE = cpuSince(cpu, pids, wallE / 1000);
    const e = timing.snapshot();
    const chunksE = Object.entries(e)
      .filter(([k]) => kindOf(k) === 'bounds')
      .reduce((n, [, s]) => n + s.count, 0);
    rounds.push({
      b: { wallMs: wallB, chunks: chunksB, timings: b, cpu: cpuB, runId: run.runId, hops },
      e: { wallMs: wallE, chunks: chunksE, timings: e, cpu: cpuE },
    });
    say(`round ${round}: (b) ${(wallB / 1000).toFixed(2)} s, (e) ${(wallE / 1000).toFixed(2)} s, (b)/(e) ${(wallE / wallB).toFixed(2)}`);
  }
  await workers.stop();
  // the round whose ratio is the median
  const ordered = [...rounds].sort((x, y) => x.e.wallMs / x.b.wallMs - y.e.wallMs / y.b.wallMs);
  const { b, e } = ordered[Math.floor(ordered.length / 2)];
  process.stdout.write(report(b, e, rounds));
  await bareSessions.end();
  await env.stop();
}

function report(b: Measured, e: Measured, rounds: { b: Measured; e: Measured }[]): string {
  const kb = byKind(b.timings);
  const ke = byKind(e.timings);
  const kinds = [...new Set([...kb.keys(), ...ke.keys()])].sort((x, y) => (kb.get(y)?.ms ?? 0) - (kb.get(x)?.ms ?? 0));
  const per = (ms: number, chunks: number) => (ms / chunks).toFixed(1);
  const inStatements = (k: Map<string, { ms: number }>) => [...k.values()].reduce((n, s) => n + s.ms, 0);
  // two sessions busy for the whole wall time is the most either can do
  const outsideB = b.wallMs * 2 - inStatements(kb);
  const outsideE = e.wallMs * 2 - inStatements(ke);
  const gap = (b.wallMs * 2) / b.chunks - (e.wallMs * 2) / e.chunks;
  const share = (d: number) => `${((d / gap) * 100).toFixed(0)} %`;
  const rows = kinds
    .map((k) => {
      const mb = kb.get(k)?.ms ?? 0;
      const me = ke.get(k)?.ms ?? 0;
      const d = mb / b.chunks - me / e.chunks;
      return {
        k,
        d,
        line: `| ${k} | ${kb.get(k)?.count ?? 0} | ${per(mb, b.chunks)} | ${ke.get(k)?.count ?? 0} | ${per(me, e.chunks)} | ${d.toFixed(1)} | ${share(d)} |`,
      };
    })
    // statements under 0.5 ms a chunk in both are listed together
    .filter((r) => Math.abs(r.d) >= 0.5 || (kb.get(r.k)?.ms ?? 0) / b.chunks >= 0.5);
  const dOutside = outsideB / b.chunks - outsideE / e.chunks;
  const rest = kinds.reduce((n, k) => n + (kb.get(k)?.ms ?? 0) / b.chunks - (ke.get(k)?.ms ?? 0) / e.chunks, 0) - rows.reduce((n, r) => n + r.d, 0);
  const cpu = (m: Measured) => (['postgres', 'temporal', 'workers', 'bench'] as const).map((k) => `${k} ${m.cpu[k].toFixed(2)}`).join(', ');
  return [
    '',
    `${ROWS} rows, ${PARTITIONS} partitions, chunks of ${CHUNK}, 2 worker processes × 1 activity, ${os.cpus().length} cores, ${new Date().toISOString()}`,
    `rounds (b)/(e): ${rounds.map((r) => (r.e.wallMs / r.b.wallMs).toFixed(2)).join(', ')}; the median round below`,
    `(b) ${(b.wallMs / 1000).toFixed(2)} s, ${b.chunks} chunks, ${Math.round(ROWS / (b.wallMs / 1000)).toLocaleString('en-US')} rows/s (timeline: npx tsx bench/run-timeline.ts ${b.runId}); ` +
      `(e) ${(e.wallMs / 1000).toFixed(2)} s, ${e.chunks} chunks, ${Math.round(ROWS / (e.wallMs / 1000)).toLocaleString('en-US')} rows/s; (b)/(e) ${(e.wallMs / b.wallMs).toFixed(2)}`,
    `CPU seconds during (b): ${cpu(b)}; during (e): ${cpu(e)} (postgres: the machine's total less the others, the OS included)`,
    `session time per chunk (wall × 2 sessions / chunks): (b) ${per(b.wallMs * 2, b.chunks)} ms, (e) ${per(e.wallMs * 2, e.chunks)} ms, gap ${gap.toFixed(1)} ms`,
    '',
    '| statement | (b) count | (b) ms/chunk | (e) count | (e) ms/chunk | (b) − (e) ms/chunk | share of the gap |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) => r.line),
    `| every other statement (each under 0.5 ms a chunk) | | | | | ${rest.toFixed(1)} | ${share(rest)} |`,
    `| outside any statement (Node, Temporal, waits, idle session) | | ${per(outsideB, b.chunks)} | | ${per(outsideE, e.chunks)} | ${dOutside.toFixed(1)} | ${share(dOutside)} |`,
    '',
    // what (b) does besides its chunks, which the bare loop does not do at all
    ...(b.hops ? ['| (b), the median round: outside its chunks, from its Temporal history | ms |', '|---|---|', ...hopRows(b.hops), ''] : []),
  ].join('\n');
}

main().catch((err) => {
  say(`profile failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
