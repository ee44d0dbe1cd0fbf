/**
 * The database-side ceiling of this project's chunk statements, without Temporal: the
 * compiled bounds / fill / MERGE / commit of each 100k-row chunk, in one stream and in two
 * streams over the dataset `npm run bench` creates. Prints rows/s and where the time went.
 * Run after `npm run bench`: BENCH_DATABASE_URL=postgres://…/backfill_bench npx tsx bench/chunk-ceiling.ts
 */
import pg from 'pg';
import { compileRun } from '../src/sql/statements';
import type { Spec } from '../src/specs/schema';
const url = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/backfill_bench';
const spec: Spec = { name: 'p', reason: 'r', database: 'X', source: { table: 'bench.orders', key: 'id' }, partition: { by: 'range', column: 'id', size: 3000000 },
  transform: { name: 'p', version: 1, sql: `SELECT c.id, c.tenant, c.created_at, c.channel, round(c.amount_cents * f.usd_rate / 100.0, 2) AS amount_usd FROM chunk c LEFT JOIN bench.fx f USING (currency)` },
  target: { table: 'bench.orders_usd', key: ['id'], mode: 'upsert' }, limits: { chunkSize: 100000, concurrency: 2 } };
const shape = { keyType: 'bigint', partitionColumnType: 'bigint', outputColumns: ['id', 'tenant', 'created_at', 'channel', 'amount_usd'], targetKeyType: 'bigint' };
const c = compileRun(spec, shape);
async function stream(lo: number, hi: number, t: Record<string, number>) {
  const client = new pg.Client(url); await client.connect();
  const bounds = { kind: 'range' as const, column: 'id', lo: String(lo), hi: String(hi) };
  let cursor: string | null = null; let rows = 0;
  for (;;) {
    const t0 = Date.now(); await client.query('BEGIN'); await client.query(c.createOutputTable);
    const b = c.chunkBounds(bounds, cursor, 100000); const r = (await client.query(b.text, b.values)).rows[0];
    const t1 = Date.now(); t.bounds += t1 - t0;
    if (r.n === 0) { await client.query('COMMIT'); break; }
    const f = c.fillFromSql(bounds, cursor, r.hi); await client.query(f.text, f.values);
    const t2 = Date.now(); t.fill += t2 - t1;
    for (const w of c.write(bounds)) await client.query(w.text, w.values);
    const t3 = Date.now(); t.write += t3 - t2;
    await client.query('COMMIT'); t.commit += Date.now() - t3;
    cursor = r.hi; rows += r.n;
  }
  await client.end(); return rows;
}
(async () => {
  const admin = new pg.Client(url); await admin.connect();
  for (const streams of [1, 2]) {
    await admin.query('TRUNCATE bench.orders_usd'); await admin.query('CHECKPOINT');
    const t = { bounds: 0, fill: 0, write: 0, commit: 0 };
    const t0 = Date.now();
    const parts = streams === 1 ? [[0, 6000000]] : [[0, 3000000], [3000000, 6000000]];
    const n = (await Promise.all(parts.map(([lo, hi]) => stream(lo, hi, t)))).reduce((a, b) => a + b, 0);
    const s = (Date.now() - t0) / 1000;
    console.log(`${streams} stream(s): ${n} rows in ${s}s = ${Math.round(n / s)} rows/s`, JSON.stringify(t));
  }
  await admin.end();
})();
