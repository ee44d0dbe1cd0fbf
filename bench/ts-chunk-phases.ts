/**
 * Where a TypeScript transform's chunk spends its time, phase by phase, on one session with
 * nothing else running: the compiled statements of `npm run bench`'s (d) over 100,000-row
 * chunks of the bench dataset, each chunk in its own REPEATABLE READ transaction as the worker
 * runs it. Two ways into the output table, side by side in every chunk, in alternating order:
 * the former one — the whole chunk read, transformed, encoded as COPY text and copied, phase by
 * phase, in a savepoint undone — and the engine's (`fillOutput`: the rows a slice at a time as
 * they arrive, src/transforms/slices.ts). Each is timed in wall time and in this process's CPU
 * time (the garbage collector's threads included), which is what a busy machine runs short of.
 * Then the guarded write, the sampled reconciliation and the commit, as the engine runs them.
 * (bench/RESULTS-LOG.md has what else was tried: one JSON document, array literals into unnest.)
 * Run: DATABASE_URL=… npm run bench:ts-phases   (BENCH_CHUNKS (6) chunks, the first as warm-up)
 */
import path from 'node:path';
import { finished } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { fillOutput } from '../src/activities/fill-output';
import type { RunContext } from '../src/activities/run-context';
import { compileRun } from '../src/compiler/statements';
import type { OutputKeyRange } from '../src/compiler/target-join';
import type { Spec } from '../src/specs/schema';
import { resolveSpec } from '../src/specs/resolve';
import { copyText } from '../src/transforms/copy-text';
import { EXACT_TYPES } from '../src/transforms/exact-types';
import { loadTransformModule } from '../src/transforms/load-module';
import { COLS } from './dataset';
import { say, startBenchEnvironment } from './harness';

const CHUNKS = Number(process.env.BENCH_CHUNKS || 6);
const CHUNK_ROWS = 100_000;
async function main(): Promise<void> {
  const env = await startBenchEnvironment({ noWorkers: true });
  const { module } = loadTransformModule(path.join(__dirname, 'transforms', 'orders-usd.ts'));
  const spec = {
    name: 'bench-ts-phases',
    reason: 'benchmark',
    database: 'BENCH_DATABASE_URL',
    source: { table: 'bench.orders', key: 'id' },
    partition: { by: 'range', column: 'id', size: 100_000_000 },
    transform: { name: 'bench-ts', version: 1, module: 'bench/transforms/orders-usd.ts' },
    target: { table: 'bench.orders_usd', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: CHUNK_ROWS, concurrency: 1 },
  } as unknown as Spec;
  const compiled = compileRun(resolveSpec(spec), {
    keyType: 'bigint',
    partitionColumnType: 'bigint',
    outputColumns: COLS.split(', '),
    targetKeyType: 'bigint',
    chunkOrder: 'key',
  });
  const bounds = { kind: 'range' as const, column: 'id', lo: '0', hi: '100000000' };
  const client = new pg.Client(env.url);
  await client.connect();
  const phases = new Map<string, number[]>();
  const cpu = new Map<string, number[]>();
  const timed = async <T>(phase: string, work: () => Promise<T> | T): Promise<T> => {
    const started = process.hrtime.bigint();
    const cpuBefore = process.cpuUsage();
    const result = await work();
    const used = process.cpuUsage(cpuBefore);
    phases.set(phase, [...(phases.get(phase) ?? []), Number(process.hrtime.bigint() - started) / 1e6]);
    cpu.set(phase, [...(cpu.get(phase) ?? []), (used.user + used.system) / 1000]);
    return result;
  };
  const columns = COLS.split(', ');
  // what fillOutput reads of a run: its transform, its output columns and its write mode
  const ctx = {
    run: { transform_name: 'bench-ts', transform_version: 1, shape: { outputColumns: columns }, spec },
    compiled,
    module,
  } as unknown as RunContext;
  const table = {};
  const whole = async (cursor: string | null, hi: string) => {
    await client.query('SAVEPOINT whole');
    const read = compiled.readChunk(bounds, cursor, hi, module.reads);
    const { rows } = await timed('whole chunk: read (SQL + decoding)', () => client.query({ text: read.text, values: read.values, types: EXACT_TYPES }));
    const out = await timed('whole chunk: transform (Node)', () => module.transform(rows));
    const text = await timed('whole chunk: COPY text (Node)', () => copyText(out, columns));
    if (!text) throw new Error('the bench transform returned rows only JSON can carry');
    await timed('whole chunk: fill from COPY (SQL)', async () => {
      const copy = client.query(copyFrom(compiled.fillFromCopy));
      copy.end(text);
      await finished(copy);
    });
    await client.query('ROLLBACK TO SAVEPOINT whole');
  };
  // the engine's fill reads the output's key range too, as a chunk does
  let range: OutputKeyRange | null = null;
  const sliced = async (cursor: string | null, hi: string) => {
    range = (
      await timed('slices, the engine: read + transform + COPY text + fill + output key range', () =>
        fillOutput(client as unknown as pg.PoolClient, ctx, table, bounds, cursor, hi),
      )
    ).range;
  };
  try {
    await env.pool.query('TRUNCATE bench.orders_usd');
    await client.query(compiled.createOutputTable);
    let cursor: string | null = null;
    for (let chunk = 0; chunk < CHUNKS; chunk++) {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      const b = compiled.chunkBounds(bounds, cursor, CHUNK_ROWS);
      const { hi } = (await timed('bounds (SQL)', () => client.query<{ n: number; hi: string }>(b.text, b.values))).rows[0];
      // each way pays for the garbage the other left: alternate which goes first
      if (chunk % 2 === 0) {
        await whole(cursor, hi);
        await sliced(cursor, hi);
      } else {
        await sliced(cursor, hi);
        await whole(cursor, hi);
      }
      for (const w of compiled.write(bounds, range)) await timed('guarded write (SQL)', () => client.query(w.text, w.values));
      const check = compiled.reconcile(range);
      await timed('sampled reconciliation (SQL)', () => client.query(check.text, check.values));
      await timed('commit', () => client.query('COMMIT'));
      cursor = hi;
    }
  } finally {
    await client.end();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const lines = ['| phase | wall ms per 100,000-row chunk (median) | chunks | CPU ms of this process (median) | chunks |', '|---|---|---|---|---|'];
  const sum = (name: string, of: Map<string, number[]>, prefix: string) => {
    const parts = [...of].filter(([phase]) => phase.startsWith(prefix)).map(([, ms]) => ms);
    of.set(
      name,
      parts[0].map((_, i) => parts.reduce((total, ms) => total + ms[i], 0)),
    );
  };
  sum('whole chunk, all four', phases, 'whole chunk:');
  sum('whole chunk, all four', cpu, 'whole chunk:');
  for (const [phase, ms] of phases) {
    // the first chunk warms caches and the JIT
    const row = (xs: number[]) =>
      `${median(xs.slice(1)).toFixed(1)} | ${xs
        .slice(1)
        .map((m) => m.toFixed(0))
        .join(' / ')}`;
    lines.push(`| ${phase} | ${row(ms)} | ${row(cpu.get(phase)!)} |`);
  }
  say(`PostgreSQL ${env.version}, ${CHUNKS - 1} chunks after one warm-up, ${new Date().toISOString()}`);
  process.stdout.write(`\n${lines.join('\n')}\n`);
  await env.stop();
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
