/**
 * Benchmark: what a backfill does to live traffic. A probe issues single-row reads and
 * updates by primary key at a fixed rate — including rows the backfill is rewriting —
 * first alone, then during an unthrottled backfill, then during a backfill with a probe
 * guard on; the three phases are repeated (BENCH_ROUNDS, default 3) so that this machine's
 * occasional disk stalls show as outliers rather than as a phase's character.
 * Prints the probe's p50/p90/p99 and the backfill's rows/s per phase.
 * Run: npm run bench:traffic   (DATABASE_URL to use a server; otherwise an embedded PostgreSQL)
 */
import os from 'node:os';
import pg from 'pg';
import { MAX_ID, ROWS, TRANSFORM } from './dataset';
import { say, startBenchEnvironment } from './harness';

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const PROBE_RATE = Number(process.env.BENCH_PROBE_RATE || 200);
const BASELINE_SECONDS = 6;
const GUARD_PERCENTILE = Number(process.env.BENCH_GUARD_PERCENTILE || 90);

interface Probe {
  latencies: number[];
  stop(): Promise<void>;
}

/** Reads and updates by primary key at PROBE_RATE ops/s on its own connection; records each latency in ms. */
async function startProbe(url: string): Promise<Probe> {
  const client = new pg.Client({ connectionString: url, application_name: 'live-traffic-probe' });
  await client.connect();
  const latencies: number[] = [];
  let running = true;
  let n = 0;
  const loop = (async () => {
    const interval = 1000 / PROBE_RATE;
    let next = performance.now();
    while (running) {
      n += 1;
      // ids spread over the whole key range: the backfill rewrites these rows while we touch them
      const id = ((n * 2654435761) % ROWS) * 3;
      const started = performance.now();
      if (n % 2 === 0) await client.query('SELECT * FROM bench.orders_usd WHERE id = $1', [id]);
      else await client.query('UPDATE bench.orders SET amount_cents = amount_cents WHERE id = $1', [id]);
      latencies.push(performance.now() - started);
      next += interval;
      const wait = next - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  })();
  return {
    latencies,
    async stop() {
      running = false;
      await loop;
      await client.end();
    },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

interface Phase {
  latencies: number[];
  rows: number;
  seconds: number;
}

async function main(): Promise<void> {
  const env = await startBenchEnvironment();
  const spec = (limits: Record<string, unknown>) => ({
    source: { table: 'bench.orders', key: 'id' },
    partition: { by: 'range', column: 'id', size: Math.ceil((MAX_ID + 1) / 4) },
    transform: { name: 'traffic', version: 1, sql: TRANSFORM },
    target: { table: 'bench.orders_usd', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: 10_000, concurrency: 2, ...limits },
  });
  const phases: Record<'baseline' | 'unthrottled' | 'guarded', Phase> = {
    baseline: { latencies: [], rows: 0, seconds: 0 },
    unthrottled: { latencies: [], rows: 0, seconds: 0 },
    guarded: { latencies: [], rows: 0, seconds: 0 },
  };
  let guardMs: number | undefined;

  const during = async (phase: Phase, work: () => Promise<number>) => {
    const probe = await startProbe(env.url);
    const started = performance.now();
    phase.rows += await work();
    phase.seconds += (performance.now() - started) / 1000;
    await probe.stop();
    phase.latencies.push(...probe.latencies);
  };

  for (let round = 1; round <= ROUNDS; round++) {
    say(`round ${round}/${ROUNDS}`);
    await env.pool.query('TRUNCATE bench.orders_usd');
    await env.pool.query('CHECKPOINT');
    await during(phases.baseline, async () => {
      await new Promise((r) => setTimeout(r, BASELINE_SECONDS * 1000));
      return 0;
    });
    // the guard's threshold comes from this machine's own quiet probe: slow down when an operation
    // is slower than GUARD_PERCENTILE (default 90) of quiet ones; one reading over it is noise, the AIMD
    // response reacts to how often readings are over it
    const sorted = [...phases.baseline.latencies].sort((a, b) => a - b);
    guardMs ??= Number(percentile(sorted, GUARD_PERCENTILE).toFixed(3));

    await during(phases.unthrottled, async () => (await env.backfill(`traffic-unthrottled-${round}`, spec({}))).rowsRead);
    await env.pool.query('TRUNCATE bench.orders_usd');
    await env.pool.query('CHECKPOINT');
    // guard SQL is one read-only SELECT (README "The spec"): the guard probes a single-row read of the
    // source; the live traffic's writes are felt through it as CPU and I/O contention
    const guards = { probeMs: { sql: `SELECT amount_cents FROM bench.orders WHERE id = ${((7 * 2654435761) % ROWS) * 3}`, soft: guardMs, hard: guardMs * 20 } };
    await during(phases.guarded, async () => (await env.backfill(`traffic-guarded-${round}`, spec({ guards }))).rowsRead);
  }

  const row = (name: string, p: Phase) => {
    const s = [...p.latencies].sort((a, b) => a - b);
    const rate = p.seconds > 0 && p.rows > 0 ? Math.round(p.rows / p.seconds).toLocaleString('en-US') : '—';
    return `| ${name} | ${s.length} | ${percentile(s, 50).toFixed(2)} | ${percentile(s, 90).toFixed(2)} | ${percentile(s, 99).toFixed(2)} | ${rate} |`;
  };
  const base90 = percentile([...phases.baseline.latencies].sort((a, b) => a - b), 90);
  const guarded90 = percentile([...phases.guarded.latencies].sort((a, b) => a - b), 90);
  const speed = phases.guarded.rows / phases.guarded.seconds / (phases.unthrottled.rows / phases.unthrottled.seconds);
  process.stdout.write(
    [
      '',
      `PostgreSQL ${env.version}, ${ROWS} rows, ${os.cpus().length} cores, probe ${PROBE_RATE} ops/s (half PK reads of the target, half PK updates of the source), ${ROUNDS} rounds, guard probeMs soft ${guardMs} ms (p${GUARD_PERCENTILE} of the quiet probe), ${new Date().toISOString()}`,
      '',
      '| Phase | probe ops | p50 ms | p90 ms | p99 ms | backfill rows/s |',
      '|---|---|---|---|---|---|',
      row('probe alone', phases.baseline),
      row('during an unthrottled backfill', phases.unthrottled),
      row('during a backfill with the probe guard', phases.guarded),
      '',
      `guarded p90 / baseline p90: ${(guarded90 / base90).toFixed(2)} (goal ≤ 1.5); guarded speed / unthrottled speed: ${speed.toFixed(2)} (goal > 0.5)`,
      '',
    ].join('\n'),
  );
  await env.stop();
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
