/**
 * Benchmark: what a backfill does to live traffic. A probe issues single-row reads and
 * updates by primary key at a fixed rate — including rows the backfill is rewriting —
 * first alone, then during backfills unthrottled and with the commitMs guard on, at each chunk
 * size of BENCH_CHUNKS, with every chunk's commit flushed (flushEveryChunk; the default with
 * the commitMs guard) and with only a partition's last (the default without it, and
 * flushEveryChunk: false with it); guarded at both cores' concurrency and at the one core a
 * database serving an application can spare (BENCH_GUARDED_CONCURRENCY). The phases are
 * repeated (BENCH_ROUNDS, default 3) so that this machine's occasional disk stalls show as
 * outliers rather than as a phase's character.
 * The probe runs in a process of its own (bench/traffic-probe.ts), as an application does, not
 * on the event loop of this process's worker.
 * Prints the probe's p50/p90/p99 and the backfill's rows/s per phase.
 * Run: npm run bench:traffic   (DATABASE_URL to use a server; otherwise an embedded PostgreSQL)
 */
import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { MAX_ID, ROWS, TRANSFORM } from './dataset';
import { say, startBenchEnvironment } from './harness';
import type { ProbeLatencies, ProbeSettings } from './traffic-probe';

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const PROBE_RATE = Number(process.env.BENCH_PROBE_RATE || 200);
const BASELINE_SECONDS = 6;
const GUARD_PERCENTILE = Number(process.env.BENCH_GUARD_PERCENTILE || 90);
/** Chunk sizes to compare (BENCH_CHUNKS, comma-separated): fewer, larger commits are a lever of their own. */
const CHUNK_SIZES = (process.env.BENCH_CHUNKS || '10000,50000').split(',').map(Number);
/** An unthrottled run takes both of this machine's cores: the full speed the guarded runs are measured against. */
const FULL_CONCURRENCY = 2;
/**
 * Guarded runs' concurrency (BENCH_GUARDED_CONCURRENCY): both cores, and the cores a database
 * serving an application can spare, one of two, as docs/sizing.md recommends.
 */
const GUARDED_CONCURRENCY = (process.env.BENCH_GUARDED_CONCURRENCY || `${FULL_CONCURRENCY},1`).split(',').map(Number);

interface Probe extends ProbeLatencies {
  stop(): Promise<void>;
}

/**
 * Starts the probe (bench/traffic-probe.ts) in a process of its own, PROBE_RATE ops/s on its
 * own connection; `stop()` collects every latency in ms.
 */
async function startProbe(url: string): Promise<Probe> {
  const settings: ProbeSettings = { url, rate: PROBE_RATE, rows: ROWS };
  const child = fork(path.join(__dirname, 'traffic-probe.ts'), [JSON.stringify(settings)], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the traffic probe exited (${code}) before it answered`))));
  exited.catch(() => undefined); // its normal end, after the answer to `stop`
  const message = () => Promise.race([new Promise<unknown>((resolve) => child.once('message', resolve)), exited]);
  await message(); // 'ready': connected
  const recorded: Probe = {
    latencies: [],
    updates: [],
    reads: [],
    async stop() {
      child.send('stop');
      Object.assign(recorded, (await message()) as ProbeLatencies);
      await exited.catch(() => undefined);
    },
  };
  return recorded;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

interface Phase {
  name: string;
  latencies: number[];
  updates: number[];
  reads: number[];
  rows: number;
  seconds: number;
}

/** One way of running the backfill: its chunk size, whether every chunk's commit waits for the disk, guarded or not, its concurrency. */
interface Variant {
  chunkSize: number;
  flushEveryChunk: boolean;
  guarded: boolean;
  concurrency: number;
  phase: Phase;
}

async function main(): Promise<void> {
  const env = await startBenchEnvironment();
  const spec = (limits: Record<string, unknown>) => ({
    source: { table: 'bench.orders', key: 'id' },
    partition: { by: 'range', column: 'id', size: Math.ceil((MAX_ID + 1) / 4) },
    transform: { name: 'traffic', version: 1, sql: TRANSFORM },
    target: { table: 'bench.orders_usd', key: ['id'], mode: 'upsert' },
    limits: { concurrency: FULL_CONCURRENCY, ...limits },
  });
  const phase = (name: string): Phase => ({ name, latencies: [], updates: [], reads: [], rows: 0, seconds: 0 });
  const baseline = phase('probe alone');
  // every variant in every round, in the same order, so a disk stall hits one phase of one round
  const variants: Variant[] = CHUNK_SIZES.flatMap((chunkSize) =>
    [true, false].flatMap((flushEveryChunk) =>
      [{ guarded: false, concurrency: FULL_CONCURRENCY }, ...GUARDED_CONCURRENCY.map((concurrency) => ({ guarded: true, concurrency }))].map(
        ({ guarded, concurrency }) => ({
          chunkSize,
          flushEveryChunk,
          guarded,
          concurrency,
          phase: phase(
            `${guarded ? 'guarded' : 'unthrottled'} backfill, concurrency ${concurrency}, chunks of ${chunkSize.toLocaleString('en-US')}, ${flushLabel(flushEveryChunk, guarded)}`,
          ),
        }),
      ),
    ),
  );
  let guardMs: number | undefined;

  const during = async (p: Phase, work: () => Promise<number>) => {
    const probe = await startProbe(env.url);
    const started = performance.now();
    p.rows += await work();
    p.seconds += (performance.now() - started) / 1000;
    await probe.stop();
    p.latencies.push(...probe.latencies);
    p.updates.push(...probe.updates);
    p.reads.push(...probe.reads);
  };

  for (let round = 1; round <= ROUNDS; round++) {
    say(`round ${round}/${ROUNDS}`);
    await env.pool.query('TRUNCATE bench.orders_usd');
    await env.pool.query('CHECKPOINT');
    await during(baseline, async () => {
      await new Promise((r) => setTimeout(r, BASELINE_SECONDS * 1000));
      return 0;
    });
    // the guard's threshold comes from this machine's own quiet probe: slow down when an operation
    // is slower than GUARD_PERCENTILE (default 90) of quiet ones; one reading over it is noise, the AIMD
    // response reacts to how often readings are over it
    guardMs ??= Number(
      percentile(
        [...baseline.updates].sort((a, b) => a - b),
        GUARD_PERCENTILE,
      ).toFixed(3),
    );
    // the commitMs guard times a durable one-row commit: what the probe's updates wait for, and
    // what the backfill's WAL slows first (a read-only probe guard stays fast meanwhile)
    const guards = { commitMs: { soft: guardMs, hard: guardMs * 20 } };
    for (const [i, v] of variants.entries()) {
      await env.pool.query('TRUNCATE bench.orders_usd');
      await env.pool.query('CHECKPOINT');
      const limits = { chunkSize: v.chunkSize, concurrency: v.concurrency, flushEveryChunk: v.flushEveryChunk, ...(v.guarded ? { guards } : {}) };
      await during(v.phase, async () => (await env.backfill(`traffic-${i}-${round}`, spec(limits))).rowsRead);
    }
  }

  const sorted = (p: Phase) => [...p.latencies].sort((a, b) => a - b);
  const p99Of = (ms: number[]) =>
    percentile(
      [...ms].sort((a, b) => a - b),
      99,
    ).toFixed(2);
  const rate = (p: Phase) => p.rows / p.seconds;
  const row = (p: Phase) => {
    const s = sorted(p);
    const rows = p.seconds > 0 && p.rows > 0 ? Math.round(rate(p)).toLocaleString('en-US') : '—';
    return `| ${p.name} | ${s.length} | ${percentile(s, 50).toFixed(2)} | ${percentile(s, 90).toFixed(2)} | ${percentile(s, 99).toFixed(2)} | ${p99Of(p.reads)} | ${p99Of(p.updates)} | ${rows} |`;
  };
  const base90 = percentile(sorted(baseline), 90);
  const base99 = percentile(sorted(baseline), 99);
  const unthrottledRate = Math.max(...variants.filter((v) => !v.guarded).map((v) => rate(v.phase)));
  const verdicts = variants
    .filter((v) => v.guarded)
    .map(
      (v) =>
        `| ${v.concurrency} | ${v.chunkSize.toLocaleString('en-US')} | ${v.flushEveryChunk ? 'every commit (default)' : 'last commit (flushEveryChunk: false)'} | ${(percentile(sorted(v.phase), 90) / base90).toFixed(2)} | ${(percentile(sorted(v.phase), 99) / base99).toFixed(2)} | ${(rate(v.phase) / unthrottledRate).toFixed(2)} |`,
    );
  process.stdout.write(
    [
      '',
      `PostgreSQL ${env.version}, ${ROWS} rows, ${os.cpus().length} cores, probe ${PROBE_RATE} ops/s (half PK reads of the target, half PK updates of the source), ${ROUNDS} rounds, guard commitMs soft ${guardMs} ms (p${GUARD_PERCENTILE} of the quiet probe's updates), ${new Date().toISOString()}`,
      '',
      '| Phase | probe ops | p50 ms | p90 ms | p99 ms | reads p99 ms | updates p99 ms | backfill rows/s |',
      '|---|---|---|---|---|---|---|---|',
      row(baseline),
      ...variants.map((v) => row(v.phase)),
      '',
      'Guarded runs against the goals: p90 and p99 × the quiet probe (goals ≤ 1.5 and ≤ 2), speed × the fastest unthrottled run (goal > 0.5):',
      '',
      '| concurrency | chunks of | flushed | p90 × quiet | p99 × quiet | speed × unthrottled |',
      '|---|---|---|---|---|---|',
      ...verdicts,
      '',
    ].join('\n'),
  );
  await env.stop();
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});

/** Which commits wait for the disk, and whether that is the default: with the commitMs guard every one is. */
function flushLabel(flushEveryChunk: boolean, guarded: boolean): string {
  if (flushEveryChunk) return guarded ? 'every commit flushed (default with commitMs)' : 'every commit flushed (flushEveryChunk)';
  return guarded ? 'only the last commit flushed (flushEveryChunk: false)' : 'only the last commit flushed (default)';
}
