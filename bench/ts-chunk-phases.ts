/**
 * Where a TypeScript transform's chunk spends its time, phase by phase, on one session with
 * nothing else running: the compiled statements of `npm run bench`'s (d) over 100,000-row
 * chunks of the bench dataset (read with the transform's exact types, transform, serialise,
 * fill the output table, guarded write, sampled reconciliation), each chunk in its own
 * REPEATABLE READ transaction as the worker runs it. Beside the engine's COPY fill it times the
 * former one, the rows as one JSON document into json_populate_recordset, in a savepoint undone
 * (docs/benchmarks-log.md has what else was tried: array literals into unnest).
 * Run: DATABASE_URL=… npm run bench:ts-phases   (BENCH_CHUNKS (6) chunks, the first as warm-up)
 */
import path from 'node:path';
import { finished } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { compileRun } from '../src/compiler/statements';
import { readOutputKeyRange } from '../src/db/output-key-range';
import type { Spec } from '../src/specs/schema';
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
  const compiled = compileRun(spec, {
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
  const timed = async <T>(phase: string, work: () => Promise<T> | T): Promise<T> => {
    const started = process.hrtime.bigint();
    const result = await work();
    phases.set(phase, [...(phases.get(phase) ?? []), Number(process.hrtime.bigint() - started) / 1e6]);
    return result;
  };
  try {
    await env.pool.query('TRUNCATE bench.orders_usd');
    await client.query(compiled.createOutputTable);
    let cursor: string | null = null;
    for (let chunk = 0; chunk < CHUNKS; chunk++) {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      const b = compiled.chunkBounds(bounds, cursor, CHUNK_ROWS);
      const { hi } = (await timed('bounds (SQL)', () => client.query<{ n: number; hi: string }>(b.text, b.values))).rows[0];
      const read = compiled.readChunk(bounds, cursor, hi, module.reads);
      const { rows } = await timed('read: rows into Node (SQL + decoding)', () => client.query({ text: read.text, values: read.values, types: EXACT_TYPES }));
      const out = await timed('transform (Node)', () => module.transform(rows));
      // the former path first, into the same table in a savepoint that is undone
      await client.query('SAVEPOINT former');
      const json = await timed('former: JSON.stringify (Node)', () => JSON.stringify(out));
      const fromJson = compiled.fillFromJson(json);
      await timed('former: fill from JSON (SQL)', () => client.query(fromJson.text, fromJson.values));
      await client.query('ROLLBACK TO SAVEPOINT former');
      const text = await timed('COPY text (Node): the engine', () => copyText(out, COLS.split(', ')));
      if (!text) throw new Error('the bench transform returned rows only JSON can carry');
      await timed('fill from COPY (SQL): the engine', async () => {
        const copy = client.query(copyFrom(compiled.fillFromCopy));
        copy.end(text);
        await finished(copy);
      });
      const range = await timed('output key range (SQL)', () => readOutputKeyRange(client, compiled));
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
  const lines = ['| phase | ms per 100,000-row chunk (median) | chunks |', '|---|---|---|'];
  for (const [phase, ms] of phases) {
    const measured = ms.slice(1); // the first chunk warms caches and the JIT
    lines.push(`| ${phase} | ${median(measured).toFixed(1)} | ${measured.map((m) => m.toFixed(0)).join(' / ')} |`);
  }
  say(`PostgreSQL ${env.version}, ${CHUNKS - 1} chunks after one warm-up, ${new Date().toISOString()}`);
  process.stdout.write(`\n${lines.join('\n')}\n`);
  await env.stop();
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
