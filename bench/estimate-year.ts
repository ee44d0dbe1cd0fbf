/**
 * The estimate's steadiness (`npm run bench:estimate`, part `year`): a 300,000-row table in 365
 * day partitions whose target is a third right, a third stale and a third missing, planned with
 * `--measure-writes` and then run, BENCH_YEAR_RUNS times (5) over the same starting state.
 * Goal: every run within ±25 % of its projection, and the projections' spread
 * ((max − min) / median) under 15 %.
 * Part `pace`: the same year run with its partitions in groups and each a workflow of its own,
 * alternating, BENCH_PACE_ROUNDS times (3) each: how many times the single partitions' reference
 * each run's orchestration took (orchestration-pace.ts paceFactor), and the ratio of the two
 * medians, which is what the grouped reference (REFERENCE_GROUPED_PACE) scales that reference by.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { stringify } from 'yaml';
import { checkSpec } from '../src/operations/check-spec';
import { estimatePlan } from '../src/operations/estimate-plan';
import { recentUndisturbedRuns } from '../src/ledger/run-timings';
import { paceFactor, REFERENCE_GROUPED_PACE, REFERENCE_PACE } from '../src/operations/orchestration-pace';
import { say, type BenchEnvironment } from './harness';

const ROWS = Number(process.env.BENCH_YEAR_ROWS || 300_000);
const RUNS = Number(process.env.BENCH_YEAR_RUNS || 5);
const PACE_ROUNDS = Number(process.env.BENCH_PACE_ROUNDS || 3);

const TRANSFORM = `SELECT c.id, c.currency, round(c.amount_cents * r.usd_rate / 100.0, 2) AS amount_usd
  FROM chunk c LEFT JOIN est.rates r USING (currency)`;

const spec = {
  reason: 'benchmark: the estimate against the run',
  source: { table: 'est.events', key: 'id' },
  partition: { by: 'time', column: 'created_at', size: '1 day' },
  transform: { name: 'events-usd', version: 1, sql: TRANSFORM },
  target: { table: 'est.events_usd', key: ['id'], mode: 'upsert' },
  limits: { chunkSize: 5000, concurrency: 6 },
};

async function createYear(pool: pg.Pool): Promise<void> {
  const { rows: exists } = await pool.query<{ t: string | null }>("SELECT to_regclass('est.events')::text AS t");
  if (exists[0].t) {
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM est.events');
    if (Number(rows[0].n) === ROWS) return;
  }
  say(`creating est.events with ${ROWS} rows over 365 days…`);
  await pool.query(`DROP SCHEMA IF EXISTS est CASCADE; CREATE SCHEMA est;
    CREATE TABLE est.rates (currency text PRIMARY KEY, usd_rate numeric NOT NULL);
    INSERT INTO est.rates VALUES ('EUR', 1.08), ('GBP', 1.27), ('JPY', 0.0067), ('USD', 1);
    CREATE TABLE est.events (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, currency text NOT NULL, amount_cents bigint NOT NULL);
    INSERT INTO est.events SELECT g, timestamptz '2025-01-01 00:00+00' + (g - 1) * interval '365 days' / ${ROWS},
      (ARRAY['EUR', 'GBP', 'JPY', 'USD'])[1 + g % 4], (g::bigint * 7919) % 1000000 FROM generate_series(1, ${ROWS}) g;
    CREATE INDEX ON est.events (created_at, id);
    CREATE TABLE est.events_usd (id bigint PRIMARY KEY, currency text NOT NULL, amount_usd numeric(14, 2));
    ANALYZE est.events, est.rates`);
}

/** The starting state of every run: a third of the rows right, a third stale, a third missing. */
async function resetTarget(pool: pg.Pool): Promise<void> {
  await pool.query('TRUNCATE est.events_usd');
  await pool.query(
    `INSERT INTO est.events_usd SELECT e.id, e.currency, e.amount_usd + CASE WHEN e.id % 3 = 1 THEN 1 ELSE 0 END
       FROM (${TRANSFORM.replace('chunk c', 'est.events c')}) e WHERE e.id % 3 <> 2`,
  );
  await pool.query('VACUUM ANALYZE est.events_usd');
}

/** A plan's estimate of a checked spec, as `backfill plan --measure-writes` makes it. */
export type EstimateAsPlan = (checked: Awaited<ReturnType<typeof checkSpec>>, checkSeconds: number) => ReturnType<typeof estimatePlan>;

export async function estimateYear(env: BenchEnvironment, estimateAsPlan: EstimateAsPlan, specDir: string): Promise<string[]> {
  await createYear(env.pool);
  const rows: { projected: number; actual: number; parts: string; binding: string }[] = [];
  for (let i = 1; i <= RUNS; i++) {
    await resetTarget(env.pool);
    const name = `estimate-year-${Date.now()}`;
    const file = path.join(specDir, `${name}.yaml`);
    writeFileSync(file, stringify({ name, database: 'BENCH_DATABASE_URL', ...spec }));
    const checking = performance.now();
    const checked = await checkSpec(file);
    const estimate = await estimateAsPlan(checked, (performance.now() - checking) / 1000);
    // the sample's rolled-back writes leave dead tuples: gone before the run is measured
    await env.pool.query('VACUUM est.events_usd');
    const started = process.hrtime.bigint();
    await env.backfill(name, spec);
    const actual = Number(process.hrtime.bigint() - started) / 1e9;
    const p = estimate.projected;
    const parts = [p.computeSeconds, p.writeSeconds ?? 0, p.orchestrationSeconds, p.fixedSeconds].map((s) => s.toFixed(1)).join(' · ');
    rows.push({ projected: p.durationSeconds, actual, parts, binding: p.bindingLimit });
    say(`year, run ${i}: projected ${p.durationSeconds.toFixed(1)} s (${parts}; ${p.bindingLimit}), actual ${actual.toFixed(1)} s`);
  }
  const projections = rows.map((r) => r.projected).sort((a, b) => a - b);
  const median = projections[Math.floor(projections.length / 2)];
  const spread = (projections[projections.length - 1] - projections[0]) / median;
  return [
    `${ROWS.toLocaleString('en-US')} rows in 365 day partitions, a third right, a third stale, a third missing; ${RUNS} runs:`,
    '',
    '| run | projected (s) | actual (s) | projected / actual | compute · write · orchestration · fixed (s) | what binds |',
    '|---|---:|---:|---:|---|---|',
    ...rows.map(
      (r, i) => `| ${i + 1} | ${r.projected.toFixed(1)} | ${r.actual.toFixed(1)} | ${(r.projected / r.actual).toFixed(2)} | ${r.parts} | ${r.binding} |`,
    ),
    '',
    `Within ±25 %: ${rows.filter((r) => Math.abs(r.projected / r.actual - 1) <= 0.25).length} of ${RUNS}; the projections' spread ((max − min) / median): ${(spread * 100).toFixed(0)} %.`,
  ];
}

/** Part `pace`: groups against single partitions, on the year run. */
export async function groupPace(env: BenchEnvironment): Promise<string[]> {
  await createYear(env.pool);
  const factors: Record<'grouped' | 'alone', number[]> = { grouped: [], alone: [] };
  const seconds: Record<'grouped' | 'alone', number[]> = { grouped: [], alone: [] };
  for (let i = 1; i <= PACE_ROUNDS; i++) {
    for (const kind of ['grouped', 'alone'] as const) {
      await resetTarget(env.pool);
      const name = `pace-year-${kind}-${Date.now()}`;
      const started = process.hrtime.bigint();
      const result = await env.backfill(name, spec, { partitionsAlone: kind === 'alone' });
      seconds[kind].push(Number(process.hrtime.bigint() - started) / 1e9);
      const timing = (await recentUndisturbedRuns(env.pool, { limit: 50, minPartitions: 12, withinDays: 1 })).find((t) => t.runId === result.runId);
      if (!timing) throw new Error(`run ${result.runId} (${kind}) is not an undisturbed run the pace can be measured by`);
      if (timing.grouped !== (kind === 'grouped')) throw new Error(`run ${result.runId} was to run ${kind} but its ledger says otherwise`);
      // against the single partitions' reference, both: their ratio is the grouped reference's scale
      const factor = paceFactor({ ...timing, grouped: false });
      if (factor === undefined) throw new Error(`run ${result.runId} spent too much of its time in chunks to measure its orchestration`);
      factors[kind].push(factor);
      say(`pace, round ${i}, ${kind}: ${seconds[kind][i - 1].toFixed(2)} s, ${factor.toFixed(2)} × the single partitions' reference`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ratio = median(factors.grouped) / median(factors.alone);
  const row = (kind: 'grouped' | 'alone') =>
    `| ${kind === 'grouped' ? 'in groups' : 'a workflow each'} | ${seconds[kind].map((x) => x.toFixed(2)).join(' / ')} | ${factors[kind].map((x) => x.toFixed(2)).join(' / ')} | ${median(factors[kind]).toFixed(2)} |`;
  return [
    `The year run (365 day partitions of about ${Math.round(ROWS / 365)} rows, concurrency ${spec.limits.concurrency}), ${PACE_ROUNDS} rounds each way, alternating:`,
    '',
    "| partitions | run seconds | × the single partitions' reference (orchestration) | median |",
    '|---|---|---|---:|',
    row('grouped'),
    row('alone'),
    '',
    `Groups / single: ${ratio.toFixed(2)} (the grouped reference now: ${(REFERENCE_GROUPED_PACE.slotMs / REFERENCE_PACE.slotMs).toFixed(2)}).`,
  ];
}
