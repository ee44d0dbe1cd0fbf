/**
 * A check recomputes a TypeScript transform in Node two ways: into the session's output table
 * (a session that ran the run's chunks has one; COPY text, or JSON for a slice only JSON
 * carries) or as one JSON document (any other session: `verify`, a fresh connection). Both
 * must find the same wrong rows, on a target with a quoted mixed-case name and a composite key
 * whose rows the transform partly sends as JSON — and the table path must leave the session's
 * output table empty, as a chunk expects it.
 */
import type pg from 'pg';
import { compileRun } from '../src/compiler/statements';
import { createPool } from '../src/db/pool';
import type { Spec } from '../src/specs/schema';
import { resolveSpec } from '../src/specs/resolve';
import type { TransformModule } from '../src/transforms/define';
import { TransformError } from '../src/transforms/transform-error';
import { comparePartition, outputTypes, type Recomputable } from '../src/gates/compare';
import { createTestDatabase, type TestDatabase } from './helpers/db';

let db: TestDatabase;
let warm: pg.Pool;

const spec = resolveSpec({
  name: 'compare-module',
  reason: 'test',
  database: 'X',
  source: { table: 'app.src', key: 'id' },
  partition: { by: 'range', column: 'id', size: 1_000_000 },
  transform: { name: 'usd', version: 1, module: 'usd.ts' },
  target: { table: 'app.Usd Totals', key: ['Tenant', 'id'], mode: 'upsert' },
  limits: { chunkSize: 10_000, concurrency: 1 },
} as Spec);
const shape = { keyType: 'bigint', partitionColumnType: 'bigint', outputColumns: ['Tenant', 'id', 'Amount', 'note'], targetKeyType: 'integer' };
const compiled = compileRun(spec, shape);

const usd: TransformModule = {
  columns: shape.outputColumns,
  reads: ['id', 'tenant', 'cents', 'note'],
  transform: (rows) =>
    rows.map((r) => {
      const cents = r.cents === null ? null : BigInt(r.cents as string);
      return {
        Tenant: r.tenant,
        id: r.id,
        Amount: cents === null ? null : `${cents / 100n}.${(cents % 100n).toString().padStart(2, '0')}`,
        // an object goes to a text column as its JSON text, which only JSON carries
        note: Number(r.id) % 10_000 < 200 ? { n: r.tenant } : r.note,
      };
    }),
};
const ctx: Recomputable = { run: { shape, transform_name: 'usd', transform_version: 1 } as Recomputable['run'], spec, compiled, module: usd };
const bounds = { kind: 'range' as const, column: 'id', lo: '0', hi: '1000000' };

beforeAll(async () => {
  db = await createTestDatabase('cmpmodule');
  await db.pool.query(`
    CREATE SCHEMA app;
    CREATE TABLE app.src (id bigint PRIMARY KEY, tenant integer NOT NULL, cents bigint, note text);
    INSERT INTO app.src SELECT n, 1 + n % 12, CASE WHEN n % 41 = 0 THEN NULL ELSE n * 7 % 100000 END, 'note ' || n FROM generate_series(1, 30000) n;
    CREATE TABLE app."Usd Totals" ("Tenant" integer, id bigint, "Amount" numeric(12,2), note text, PRIMARY KEY ("Tenant", id));
    INSERT INTO app."Usd Totals"
      SELECT tenant, id, cents / 100.0, CASE WHEN id % 10000 < 200 THEN '{"n":' || tenant || '}' ELSE note END FROM app.src;
    -- what the checks must find: 7 rows with another amount, 5 rows missing (two of them sent as JSON)
    UPDATE app."Usd Totals" SET "Amount" = "Amount" + 1 WHERE id IN (3, 5000, 9999, 12345, 20001, 25000, 29999);
    DELETE FROM app."Usd Totals" WHERE id IN (17, 10050, 10150, 22222, 30000);`);
  // one session that has the output table, as a worker's session that ran chunks of the run
  warm = createPool(db.url, { max: 1, applicationName: 'backfill-test' });
  await warm.query(compiled.createOutputTable);
});

afterAll(async () => {
  await warm?.end();
  await db?.drop();
});

/** The comparison, its example keys in order (array_agg keeps the order rows were read in, which may differ). */
const compare = async (pool: pg.Pool, slice?: { cursor: string | null; rows: number }) => {
  const c = await comparePartition(pool, ctx, bounds, { pageRows: 7000, timeoutMs: 30_000, types: await outputTypes(pool, ctx), slice });
  return { ...c, examples: [...c.examples].sort() };
};

test('into the output table or as one JSON document, the check finds the same wrong rows', async () => {
  const here = (pool: pg.Pool) => pool.query(compiled.outputTableHere.text, compiled.outputTableHere.values).then((r) => r.rows[0].here);
  expect(await here(warm)).toBe(true);
  const fresh = createPool(db.url, { max: 1, applicationName: 'backfill-test' });
  try {
    expect(await here(fresh)).toBe(false);
    const viaTable = await compare(warm);
    const viaJson = await compare(fresh);
    expect(viaTable).toEqual(viaJson);
    expect(viaTable).toMatchObject({ compared: 30_000, differing: 7, missing: 5, extra: 0 });
    // a slice of the keys, as the whole-run check samples them
    const sliceTable = await compare(warm, { cursor: '9000', rows: 3000 });
    expect(sliceTable).toEqual(await compare(fresh, { cursor: '9000', rows: 3000 }));
    expect(sliceTable).toMatchObject({ compared: 3000, differing: 1, missing: 2 });
    // the recompute was rolled back with its read-only transaction: the table is as a chunk expects it
    expect((await warm.query(`SELECT count(*)::int AS n FROM ${compiled.outputTable}`)).rows[0].n).toBe(0);
    // and the fresh session created nothing
    expect(await here(fresh)).toBe(false);
  } finally {
    await fresh.end();
  }
});

test('a transform that throws while a check recomputes it: a TransformError either way, its summary free of row values', async () => {
  const throwing: Recomputable = {
    ...ctx,
    module: {
      ...usd,
      transform: (rows) => {
        const secret = rows.find((r) => Number(r.id) === 12_345);
        if (secret) throw new RangeError(`bad note ${String(secret.note)}`);
        return usd.transform(rows);
      },
    },
  };
  const fresh = createPool(db.url, { max: 1, applicationName: 'backfill-test' });
  try {
    for (const pool of [warm, fresh]) {
      const failure = comparePartition(pool, throwing, bounds, { pageRows: 7000, timeoutMs: 30_000, types: await outputTypes(pool, throwing) });
      await expect(failure).rejects.toBeInstanceOf(TransformError);
      await expect(failure).rejects.toMatchObject({ message: 'transform usd@1 threw: bad note note 12345', summary: 'transform usd@1 threw RangeError' });
    }
  } finally {
    await fresh.end();
  }
});
