/**
 * Where a demo run's seconds go: the demo spec run on a dev server started as `demo` starts it
 * (one in-process worker), each round split by its Temporal history (run-history.ts: `start` in
 * the client, registration, the first partition, the hand-overs between partitions, the
 * whole-run check, the finish). It is the attribution behind the demo's ratio in bench/RESULTS.md.
 * Run: npm run bench:demo-trace   (DATABASE_URL to use a server; BENCH_ROUNDS (3))
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ensureDemoData } from '../src/dev/demo-data';
import { cpuNow, cpuSince, type CpuUse } from './cpu';
import { say, startBenchEnvironment } from './harness';
import { hopRows, runHops } from './run-history';

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);

async function main(): Promise<void> {
  const env = await startBenchEnvironment({ dataset: false, asDemo: true, workerActivities: 20 });
  try {
    await ensureDemoData(env.pool, say);
    const {
      name: _n,
      reason: _r,
      database: _d,
      ...body
    } = parse(readFileSync(path.join(__dirname, '..', 'examples', 'orders-usd.yaml'), 'utf8')) as Record<string, unknown>;
    const lines: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      await env.pool.query('TRUNCATE demo.orders_usd');
      await env.pool.query('VACUUM ANALYZE demo.orders_usd');
      const cpu = cpuNow([]);
      const calledAt = Date.now();
      const result = await env.backfill(`trace-${calledAt}`, body);
      const returnedAt = Date.now();
      const used = cpuSince(cpu, [], (returnedAt - calledAt) / 1000);
      say(`  round ${round}: ${returnedAt - calledAt} ms`);
      const hops = await runHops(env.client, result.workflowId, result.firstRunId, calledAt, returnedAt);
      lines.push(
        `Round ${round}: ${returnedAt - calledAt} ms from the call to \`start\` to the result; ${cpuLine(used)}.`,
        '',
        '| step | ms |',
        '|---|---|',
        ...hopRows(hops),
        '',
      );
    }
    process.stdout.write(`\nThe demo spec, ${ROUNDS} rounds, PostgreSQL ${env.version}, ${new Date().toISOString()}\n\n${lines.join('\n')}`);
  } finally {
    await env.stop();
  }
}

/** Where the round's CPU went: with every core busy, the run takes as long as its CPU seconds, whoever spends them. */
function cpuLine(u: CpuUse): string {
  const s = (n: number) => n.toFixed(2);
  return `CPU ${s(u.machine)} s (the cores ${Math.round(u.busy * 100)} % busy): PostgreSQL ${s(u.postgres)}, the Temporal server ${s(u.temporal)}, the worker and client ${s(u.bench)}`;
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
