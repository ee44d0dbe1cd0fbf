/**
 * Benchmark: how close `plan --measure-writes` comes to the run it projects. On the demo
 * dataset (examples/orders-usd.yaml), at two sizes (the whole spec, and its first
 * BENCH_SMALL_DAYS days) and two write mixes (an empty target, and a target already half
 * correct), it makes the plan's estimate and then runs the backfill, and prints projected
 * against actual: duration, WAL, the target's storage growth and the before-images' size (rows
 * and bytes of the run's image table, docs/undo.md). Goal: within ±30 %.
 * Run: npm run bench:estimate   (DATABASE_URL to use a server; otherwise an embedded PostgreSQL)
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { createPool } from '../src/db/pool';
import { ensureDemoData } from '../src/dev/demo-data';
import { checkSpec } from '../src/operations/check-spec';
import { estimatePlan } from '../src/operations/estimate-plan';
import { imagedRows } from '../src/undo/run-images';
import { say, startBenchEnvironment } from './harness';
import { estimateYear, groupPace, type EstimateAsPlan } from './estimate-year';

/** Which parts run: `year` (the estimate's steadiness, estimate-year.ts), `pace` (groups against single partitions, estimate-year.ts), `demo` (two sizes, two write mixes). */
const PARTS = new Set((process.env.BENCH_PARTS || 'year,demo').split(','));
const SMALL_DAYS = Number(process.env.BENCH_SMALL_DAYS || 20);
const demoSpec = parse(readFileSync(path.join(__dirname, '..', 'examples', 'orders-usd.yaml'), 'utf8')) as Record<string, unknown> & {
  source: Record<string, unknown>;
  partition: Record<string, unknown>;
};

const EXPECTED = `SELECT c.id, c.currency, round(c.amount_cents * r.usd_rate / 100.0, 2) AS amount_usd
  FROM demo.orders c LEFT JOIN demo.fx_rates r USING (currency) WHERE c.status <> 'test'`;

interface Row {
  size: string;
  mix: string;
  rows: number;
  projected: { seconds: number; wal: number; storage: number; images: number; imageBytes: number };
  actual: { seconds: number; wal: number; storage: number; images: number; imageBytes: number };
}

async function main(): Promise<void> {
  const env = await startBenchEnvironment({ dataset: false, asDemo: true, workerActivities: 20 });
  /** As `backfill plan --measure-writes` makes it: a process of its own, so new sessions every time. */
  const estimateAsPlan: EstimateAsPlan = async (checked, checkSeconds) => {
    // as `plan` opens it: a connection more than the partitions it probes at once
    const planPool = createPool(env.url, { max: 7 });
    try {
      return await estimatePlan(planPool, checked, { measureWrites: true, checkSeconds });
    } finally {
      await planPool.end();
    }
  };
  const specDir = mkdtempSync(path.join(os.tmpdir(), 'backfill-estimate-'));
  const results: Row[] = [];
  const lines: string[] = [];
  try {
    if (PARTS.has('pace')) lines.push(...(await groupPace(env)), '');
    if (PARTS.has('year')) lines.push(...(await estimateYear(env, estimateAsPlan, specDir)), '');
    if (PARTS.has('demo')) await demoParts();
  } finally {
    await env.stop();
  }
  process.stdout.write(`${[...lines, ...demoTable(results)].join('\n')}\n`);

  async function demoParts(): Promise<void> {
    await ensureDemoData(env.pool, say);
    const { rows: span } = await env.pool.query<{ lo: Date }>("SELECT min(created_at) AS lo FROM demo.orders WHERE status <> 'test'");
    const cutoff = new Date(span[0].lo.getTime() + SMALL_DAYS * 86_400_000).toISOString();
    const baseWhere = String(demoSpec.source.where ?? 'true');
    const sizes = [
      { size: `${SMALL_DAYS} days`, where: `(${baseWhere}) AND created_at < '${cutoff}'` },
      { size: 'whole demo', where: baseWhere },
    ];
    for (const { size, where } of sizes) {
      for (const mix of ['empty target', 'half correct']) {
        await env.pool.query('TRUNCATE demo.orders_usd');
        if (mix === 'half correct')
          await env.pool.query(`INSERT INTO demo.orders_usd (id, currency, amount_usd) SELECT * FROM (${EXPECTED}) e WHERE e.id % 2 = 0`);
        await env.pool.query('VACUUM ANALYZE demo.orders_usd');
        const name = `estimate-${results.length}`;
        const spec = { ...demoSpec, name, database: 'BENCH_DATABASE_URL', source: { ...demoSpec.source, where } };
        const file = path.join(specDir, `${name}.yaml`);
        writeFileSync(file, stringify(spec));
        const checking = performance.now();
        const checked = await checkSpec(file);
        const estimate = await estimateAsPlan(checked, (performance.now() - checking) / 1000);
        // the sample's rolled-back writes leave dead tuples: gone before the run is measured
        await env.pool.query('VACUUM demo.orders_usd');
        const before = await marks(env.pool);
        const started = process.hrtime.bigint();
        // the harness names the run and its database itself
        const body = Object.fromEntries(Object.entries(spec).filter(([k]) => k !== 'name' && k !== 'database'));
        const { rowsRead, runId } = await env.backfill(name, body);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const after = await marks(env.pool);
        const images = await imagesOf(env.pool, runId);
        const row: Row = {
          size,
          mix,
          rows: rowsRead,
          projected: {
            seconds: estimate.projected.durationSeconds,
            wal: estimate.projected.walBytes ?? 0,
            storage: estimate.projected.storageBytes ?? 0,
            images: estimate.projected.images?.rows ?? 0,
            imageBytes: estimate.projected.images?.bytes ?? 0,
          },
          actual: { seconds, wal: after.wal - before.wal, storage: after.size - before.size, ...images },
        };
        results.push(row);
        const p = estimate.projected;
        say(
          `${size}, ${mix}: projected ${p.durationSeconds.toFixed(1)} s (compute ${p.computeSeconds.toFixed(2)}, write ${(p.writeSeconds ?? 0).toFixed(2)}, ` +
            `orchestration ${p.orchestrationSeconds.toFixed(2)}, fixed ${p.fixedSeconds.toFixed(2)}; ${p.bindingLimit}), actual ${seconds.toFixed(1)} s`,
        );
      }
    }
  }
}

function demoTable(results: Row[]): string[] {
  if (results.length === 0) return [];
  const ratio = (p: number, a: number) => (a > 0 ? `${(p / a).toFixed(2)}` : '—');
  const mb = (b: number) => (b / 1e6).toFixed(1);
  return [
    '| scope | target | rows | duration projected / actual (s) | ratio | WAL projected / actual (MB) | ratio | storage growth projected / actual (MB) | ratio | before-images projected / actual (rows) | ratio | their size projected / actual (MB) | ratio |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.size} | ${r.mix} | ${r.rows.toLocaleString('en-US')} | ${r.projected.seconds.toFixed(1)} / ${r.actual.seconds.toFixed(1)} | ${ratio(r.projected.seconds, r.actual.seconds)} | ` +
        `${mb(r.projected.wal)} / ${mb(r.actual.wal)} | ${ratio(r.projected.wal, r.actual.wal)} | ${mb(r.projected.storage)} / ${mb(r.actual.storage)} | ${ratio(r.projected.storage, r.actual.storage)} | ` +
        `${r.projected.images.toLocaleString('en-US')} / ${r.actual.images.toLocaleString('en-US')} | ${ratio(r.projected.images, r.actual.images)} | ` +
        `${mb(r.projected.imageBytes)} / ${mb(r.actual.imageBytes)} | ${ratio(r.projected.imageBytes, r.actual.imageBytes)} |`,
    ),
  ];
}

/** The run's before-images as stored: rows, and bytes on disk. */
async function imagesOf(pool: import('pg').Pool, runId: string): Promise<{ images: number; imageBytes: number }> {
  const { rows } = await pool.query<{ t: string | null }>('SELECT undo_table AS t FROM backfill.runs WHERE run_id = $1', [runId]);
  if (!rows[0]?.t) return { images: 0, imageBytes: 0 };
  const { rows: n } = await pool.query<{ b: string }>('SELECT pg_total_relation_size($1::regclass) AS b', [rows[0].t]);
  return { images: await imagedRows(pool, runId), imageBytes: Number(n[0].b) };
}

async function marks(pool: import('pg').Pool): Promise<{ wal: number; size: number }> {
  const { rows } = await pool.query<{ wal: string; size: string }>(
    "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint AS wal, pg_total_relation_size('demo.orders_usd') AS size",
  );
  return { wal: Number(rows[0].wal), size: Number(rows[0].size) };
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
