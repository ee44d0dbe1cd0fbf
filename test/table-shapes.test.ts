/**
 * Tables unlike the demo's, as production has them: Prisma's defaults (a table "User", text ids
 * such as cuids, camelCase columns, timestamp(3)), a table named by a reserved word, a text key
 * in an ICU collation written to a target whose key is in "C".
 * Every name goes to PostgreSQL exactly as the catalog has it: planned, written, checked,
 * verified and run again with nothing rewritten; a name that matches only when case-folded
 * is refused at plan with the name that was meant.
 */
import { verifyRun, waitForResult } from '../src/operations';
import { getRun } from '../src/ledger/runs';
import type { SpecInput } from '../src/specs/schema';
import { runCli } from './helpers/cli';
import { useTestEnvironment } from './helpers/environment';
import { writeModule, writeSpec } from './helpers/orders';

const env = useTestEnvironment('shapes', { rows: 0 });

beforeAll(async () => {
  await env.db.pool.query(`
    CREATE TABLE public."User" (id text PRIMARY KEY, "createdAt" timestamp(3) NOT NULL, "amountCents" bigint NOT NULL, "displayName" text);
    -- cuid-like ids that do not grow with time, timestamps with milliseconds, many equal ones
    INSERT INTO public."User"
      SELECT 'c' || md5(g::text), timestamp '2024-01-01' + (g / 3) * interval '61 minutes 0.123 seconds', g * 7, CASE WHEN g % 5 = 0 THEN NULL ELSE 'User ' || g END
        FROM generate_series(1, 6000) g;
    CREATE INDEX "User_createdAt_id_idx" ON public."User" ("createdAt", id);
    CREATE TABLE public."UserTotals" (id text PRIMARY KEY, "createdAt" timestamp(3) NOT NULL, "amountUsd" numeric(14,2) NOT NULL);
    CREATE TABLE public."order" (id bigint PRIMARY KEY, "user" text NOT NULL, total numeric(12,2) NOT NULL);
    INSERT INTO public."order" SELECT g, 'c' || md5((g % 97)::text), g * 1.5 FROM generate_series(1, 3000) g;
    -- keys whose order differs between the two collations: case and punctuation
    CREATE TABLE public.skus (sku text COLLATE "en-US-x-icu" PRIMARY KEY, price_cents bigint NOT NULL, created_at timestamptz NOT NULL);
    INSERT INTO public.skus
      SELECT (ARRAY['sku-', 'SKU-', 'Sku_', 'ß-'])[1 + g % 4] || md5(g::text), g, timestamptz '2024-01-01' + g * interval '37 minutes' FROM generate_series(1, 4000) g;
    CREATE TABLE public.sku_prices (sku text COLLATE "C" PRIMARY KEY, price numeric(12,2) NOT NULL);
  `);
});

function userSpec(overrides: Partial<SpecInput> = {}): SpecInput {
  return {
    name: 'orm-users',
    reason: 'test: tables as Prisma makes them',
    database: env.db.envVar,
    source: { table: 'public.User', key: 'id' },
    partition: { by: 'time', column: 'createdAt', size: '7 days' },
    transform: { name: 'users-usd', version: 1, sql: 'SELECT c.id, c."createdAt", round(c."amountCents" / 100.0, 2) AS "amountUsd" FROM chunk c' },
    target: { table: 'public.UserTotals', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: 500, concurrency: 2 },
    validate: { finalCheck: 'all', distributions: [{ column: 'amountUsd', mean: 10 }] },
    after: [{ action: 'analyze' }],
    ...overrides,
  };
}

/** Rows of the target that one statement over the source would not produce, and the other way round. */
async function differences(): Promise<number> {
  const { rows } = await env.db.pool.query(`
    WITH expected AS (SELECT id, "createdAt", round("amountCents" / 100.0, 2) AS "amountUsd" FROM public."User")
    SELECT (SELECT count(*) FROM (SELECT * FROM expected EXCEPT SELECT * FROM public."UserTotals") a)
         + (SELECT count(*) FROM (SELECT * FROM public."UserTotals" EXCEPT SELECT * FROM expected) b) AS n`);
  return Number(rows[0].n);
}

test('a Prisma-shaped table ("User", text ids, camelCase columns, timestamp(3)) is planned, backfilled exactly, verified, and re-run without a write', async () => {
  const file = writeSpec(userSpec());
  const plan = await runCli(['plan', file, '--measure-writes', '-o', 'json']);
  expect(plan.stderr).toBe('');
  expect(plan.code).toBe(0);
  expect(JSON.parse(plan.stdout).partitions.length).toBeGreaterThan(1);

  const first = await env.start(userSpec());
  const result = await waitForResult(first.handle);
  expect(result).toMatchObject({ status: 'succeeded', rowsWritten: 6000, downstream: 'succeeded' });
  expect(await differences()).toBe(0);
  // milliseconds survive the round trip through cursors and bounds
  const { rows: ms } = await env.db.pool.query(
    `SELECT count(*)::int AS n FROM public."UserTotals" WHERE extract(milliseconds FROM "createdAt")::numeric % 1000 <> 0`,
  );
  expect(ms[0].n).toBeGreaterThan(0);
  expect((await verifyRun(env.db.pool, (await getRun(env.db.pool, first.runId))!)).clean).toBe(true);

  const again = await waitForResult((await env.start(userSpec())).handle);
  expect(again).toMatchObject({ status: 'succeeded', rowsWritten: 0, rowsUnchanged: 6000 });
});

test('a TypeScript transform into quoted camelCase columns, a composite key and timestamp(3): awkward strings arrive exact, and a second run writes nothing', async () => {
  // every column a scalar: the chunks go to the output table as COPY text
  await env.db.pool.query(
    `CREATE TABLE public."UserNotes" (id text, "createdAt" timestamp(3), "note's text" text, "amount usd" numeric(14,2), PRIMARY KEY ("createdAt", id))`,
  );
  const modulePath = writeModule(
    'user-notes',
    `export default {
      columns: ['id', 'createdAt', "note's text", 'amount usd'],
      reads: ['id', 'createdAt', 'amountCents', 'displayName'],
      transform(rows: { id: string; createdAt: string; amountCents: string; displayName: string | null }[]) {
        return rows.map((r) => ({
          id: r.id,
          createdAt: r.createdAt,
          // a tab, a newline, a backslash, COPY's NULL marker and quotes inside the value
          "note's text": r.displayName === null ? null : r.displayName + '\\t|\\n|\\\\N|"q\\'s"',
          'amount usd': (BigInt(r.amountCents) / 100n).toString() + '.' + (BigInt(r.amountCents) % 100n).toString().padStart(2, '0'),
        }));
      },
    };\n`,
  );
  const spec = userSpec({
    name: 'orm-user-notes',
    transform: { name: 'user-notes', version: 1, module: modulePath },
    target: { table: 'public.UserNotes', key: ['createdAt', 'id'], mode: 'upsert' },
    validate: { finalCheck: 'all' },
    after: [],
  });
  expect(await waitForResult((await env.start(spec)).handle)).toMatchObject({ status: 'succeeded', rowsWritten: 6000 });
  const { rows } = await env.db.pool.query(`
    WITH expected AS (
      SELECT id, "createdAt", "displayName" || E'\\t|\\n|\\\\N|"q''s"' AS "note's text", round("amountCents" / 100.0, 2) AS "amount usd" FROM public."User")
    SELECT (SELECT count(*) FROM (SELECT * FROM expected EXCEPT SELECT * FROM public."UserNotes") a)::int AS missing,
           (SELECT count(*) FROM (SELECT * FROM public."UserNotes" EXCEPT SELECT * FROM expected) b)::int AS extra,
           (SELECT count(*) FROM public."UserNotes" WHERE "note's text" IS NULL)::int AS nulls`);
  expect(rows[0]).toEqual({ missing: 0, extra: 0, nulls: 1200 });
  expect(await waitForResult((await env.start(spec)).handle)).toMatchObject({ status: 'succeeded', rowsWritten: 0, rowsUnchanged: 6000 });
});

test('a table named by a reserved word, with a column named by another, is backfilled in update mode', async () => {
  await env.db.pool.query('ALTER TABLE public."order" ADD COLUMN "totalCents" bigint');
  const spec: SpecInput = {
    name: 'orm-order',
    reason: 'test: a table called order',
    database: env.db.envVar,
    source: { table: 'public.order', key: 'id' },
    partition: { by: 'list', column: 'user' },
    transform: { name: 'order-cents', version: 1, sql: 'SELECT c.id, (c.total * 100)::bigint AS "totalCents" FROM chunk c' },
    target: { table: 'public.order', key: ['id'], mode: 'update' },
    limits: { chunkSize: 200, concurrency: 2 },
  };
  const result = await waitForResult((await env.start(spec)).handle);
  expect(result).toMatchObject({ status: 'succeeded', rowsWritten: 3000 });
  const { rows } = await env.db.pool.query('SELECT count(*)::int AS n FROM public."order" WHERE "totalCents" IS DISTINCT FROM (total * 100)::bigint');
  expect(rows[0].n).toBe(0);
});

test('a name that matches only when case-folded is refused at plan, naming what was meant', async () => {
  const table = await runCli(['plan', writeSpec(userSpec({ source: { table: 'public.user', key: 'id' } }))]);
  expect(table.code).toBe(2);
  expect(table.stderr).toContain(
    'source.table names public.user, which does not exist; names are matched exactly as the catalog has them: did you mean public.User?',
  );
  const column = await runCli(['plan', writeSpec(userSpec({ partition: { by: 'time', column: 'createdat', size: '7 days' } }))]);
  expect(column.code).toBe(2);
  expect(column.stderr).toContain(
    'partition.column names column createdat, which public.User does not have; names are matched exactly as the catalog has them: did you mean createdAt?',
  );
});

test('a text key in an ICU collation, written to a target whose key is in "C", is planned, written exactly, verified and re-run without a write', async () => {
  const spec: SpecInput = {
    name: 'shapes-icu',
    reason: 'test: source and target keys in different collations',
    database: env.db.envVar,
    source: { table: 'public.skus', key: 'sku' },
    partition: { by: 'time', column: 'created_at', size: '10 days' },
    transform: { name: 'sku-price', version: 1, sql: 'SELECT c.sku, round(c.price_cents / 100.0, 2) AS price FROM chunk c' },
    target: { table: 'public.sku_prices', key: ['sku'], mode: 'upsert' },
    limits: { chunkSize: 300, concurrency: 2 },
    validate: { finalCheck: 'all' },
  };
  const plan = await runCli(['plan', writeSpec(spec), '-o', 'json']);
  expect(plan.stderr).toBe('');
  expect(plan.code).toBe(0);
  const first = await env.start(spec);
  expect(await waitForResult(first.handle)).toMatchObject({ status: 'succeeded', rowsWritten: 4000 });
  const { rows } = await env.db.pool.query(`
    WITH expected AS (SELECT sku COLLATE "C" AS sku, round(price_cents / 100.0, 2) AS price FROM public.skus)
    SELECT (SELECT count(*) FROM (SELECT * FROM expected EXCEPT SELECT * FROM public.sku_prices) a)
         + (SELECT count(*) FROM (SELECT * FROM public.sku_prices EXCEPT SELECT * FROM expected) b) AS n`);
  expect(Number(rows[0].n)).toBe(0);
  expect((await verifyRun(env.db.pool, (await getRun(env.db.pool, first.runId))!)).clean).toBe(true);
  expect(await waitForResult((await env.start(spec)).handle)).toMatchObject({ status: 'succeeded', rowsWritten: 0, rowsUnchanged: 4000 });
});

test('a key in a nondeterministic (case-insensitive) collation is refused at plan, source or target, saying why and what to do', async () => {
  await env.db.pool.query(`
    CREATE COLLATION public.case_insensitive (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
    CREATE TABLE public.handles (handle text COLLATE public.case_insensitive PRIMARY KEY, id bigint UNIQUE NOT NULL, created_at timestamptz NOT NULL);
    INSERT INTO public.handles SELECT 'Handle' || g, g, timestamptz '2024-01-01' + g * interval '1 hour' FROM generate_series(1, 100) g;
    CREATE TABLE public.handle_copies (handle text COLLATE public.case_insensitive PRIMARY KEY, id bigint NOT NULL);`);
  const spec = (key: string, targetKey: string): SpecInput => ({
    name: 'shapes-ci',
    reason: 'test: case-insensitive keys',
    database: env.db.envVar,
    source: { table: 'public.handles', key },
    partition: { by: 'time', column: 'created_at', size: '10 days' },
    transform: { name: 'handles', version: 1, sql: 'SELECT c.handle, c.id FROM chunk c' },
    target: { table: 'public.handle_copies', key: [targetKey], mode: 'upsert' },
  });
  const source = await runCli(['plan', writeSpec(spec('handle', 'handle'))]);
  expect(source.code).toBe(2);
  expect(source.stderr).toContain(
    'source.key handle (public.case_insensitive) on public.handles is in a nondeterministic collation, where different values compare equal',
  );
  // keyed on a deterministic column, the target's key is still matched in the insensitive collation
  const target = await runCli(['plan', writeSpec(spec('id', 'handle'))]);
  expect(target.code).toBe(2);
  expect(target.stderr).toContain('target.key handle (public.case_insensitive) on public.handle_copies is in a nondeterministic collation');
});

test('a key no cursor can walk (floating point, json) is refused at plan with the fix; domains walk and partition as their base types, numeric(20,0) partitions by range', async () => {
  await env.db.pool.query(`
    CREATE DOMAIN public.ticket_id AS bigint CHECK (VALUE > 0);
    CREATE DOMAIN public.opened_time AS timestamptz CHECK (VALUE > '2020-01-01');
    CREATE TABLE public.tickets (id public.ticket_id PRIMARY KEY, score double precision UNIQUE NOT NULL, payload json NOT NULL, opened_at public.opened_time NOT NULL,
                                 ref numeric(20,0) NOT NULL);
    INSERT INTO public.tickets SELECT g, g / 7.0, json_build_object('n', g), timestamptz '2024-01-01' + g * interval '1 hour', 90000000000000000000 + g FROM generate_series(1, 500) g;
    CREATE TABLE public.ticket_scores (id bigint PRIMARY KEY, score double precision NOT NULL);`);
  const spec = (key: string | string[]): SpecInput => ({
    name: 'shapes-tickets',
    reason: 'test: keys of every type',
    database: env.db.envVar,
    source: { table: 'public.tickets', key },
    partition: { by: 'time', column: 'opened_at', size: '5 days' },
    transform: { name: 'tickets', version: 1, sql: 'SELECT c.id, c.score FROM chunk c' },
    target: { table: 'public.ticket_scores', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: 100, concurrency: 2 },
  });
  const float = await runCli(['plan', writeSpec(spec('score'))]);
  expect(float.code).toBe(2);
  expect(float.stderr).toContain('source.key score is double precision, which keyset chunks cannot walk (a floating-point key is approximate)');
  const json = await runCli(['plan', writeSpec(spec(['id', 'payload']))]);
  expect(json.code).toBe(2);
  expect(json.stderr).toContain('source.key payload is json, which keyset chunks cannot walk (the type has no total sort order)');
  const domain = await runCli(['plan', writeSpec(spec('id'))]);
  expect(domain.stderr).toBe('');
  expect(domain.code).toBe(0);
  expect(await waitForResult((await env.start(spec('id'))).handle)).toMatchObject({ status: 'succeeded', rowsWritten: 500 });
  // range partitions on numeric(20,0), wider than bigint: bounds 0-aligned, cast to the base type, no domain CHECK on a bound
  const byRef = { ...spec('id'), name: 'shapes-tickets-ref', partition: { by: 'range' as const, column: 'ref', size: 100 } };
  expect(await waitForResult((await env.start(byRef)).handle)).toMatchObject({ status: 'succeeded', rowsWritten: 0, rowsUnchanged: 500 });
});

test('names with spaces, quotes and reserved words in the schema, the tables and every column: every kind of statement runs on them', async () => {
  await env.db.pool.query(`
    CREATE SCHEMA "Sales Ledger";
    CREATE TABLE "Sales Ledger"."Line Items" ("line id" bigint PRIMARY KEY, "sold at" timestamptz NOT NULL, "user" text NOT NULL, "amount 'cents'" bigint NOT NULL);
    INSERT INTO "Sales Ledger"."Line Items"
      SELECT g, timestamptz '2024-01-01' + g * interval '97 minutes', 'u' || (g % 5), g * 11 FROM generate_series(1, 2000) g;
    CREATE INDEX ON "Sales Ledger"."Line Items" ("sold at", "line id");
    ANALYZE "Sales Ledger"."Line Items";
    CREATE TABLE "Sales Ledger"."Line Totals" ("line id" bigint PRIMARY KEY, "sold at" timestamptz NOT NULL, "amount usd" numeric(14,2));
    CREATE TABLE "Sales Ledger"."Daily Totals" ("sold on" date PRIMARY KEY, "total usd" numeric(14,2) NOT NULL);
  `);
  const scope = { table: 'Sales Ledger.Line Items', key: 'line id', where: `"user" <> 'u4'` };
  const base = { reason: 'test: names with spaces', database: env.db.envVar, source: scope, limits: { chunkSize: 300, concurrency: 2 } };
  const usd = (version: number): SpecInput => ({
    ...base,
    name: 'spaced-totals',
    partition: { by: 'time', column: 'sold at', size: '7 days' },
    transform: { name: 'spaced-usd', version, sql: `SELECT c."line id", c."sold at", round(c."amount 'cents'" / 100.0, 2) AS "amount usd" FROM chunk c` },
    target: { table: 'Sales Ledger.Line Totals', key: ['line id'], mode: 'upsert' },
    validate: {
      finalCheck: 'all',
      invariants: [
        {
          name: 'no-negative-amounts',
          sql: `SELECT s."line id" FROM source_rows s JOIN "Sales Ledger"."Line Totals" t USING ("line id") WHERE t."amount usd" < 0`,
        },
      ],
      distributions: [{ column: 'amount usd', mean: 10 }],
    },
    after: [{ action: 'analyze' }],
  });
  const expected = `SELECT "line id", "sold at", round("amount 'cents'" / 100.0, 2) AS "amount usd" FROM "Sales Ledger"."Line Items" WHERE "user" <> 'u4'`;
  const differences = async (target: string, expectedSql: string) =>
    Number(
      (
        await env.db.pool.query(`
      SELECT (SELECT count(*) FROM (${expectedSql} EXCEPT SELECT * FROM ${target}) a) + (SELECT count(*) FROM (SELECT * FROM ${target} EXCEPT ${expectedSql}) b) AS n`)
      ).rows[0].n,
    );
  const db = ['--database', env.db.envVar];

  // plan with its preview of the writes (the transform run read-only over a sample)
  const plan = await runCli(['plan', writeSpec(usd(1)), '--measure-writes', '-o', 'json']);
  expect(plan.stderr).toBe('');
  expect(plan.code).toBe(0);
  // upsert: the chunk write, the per-chunk reconciliation, the final check, invariants, distributions, after-actions
  const first = await env.start(usd(1));
  expect(await waitForResult(first.handle)).toMatchObject({ status: 'succeeded', rowsWritten: 1600, downstream: 'succeeded' });
  expect(await differences('"Sales Ledger"."Line Totals"', expected)).toBe(0);
  expect((await runCli(['verify', first.runId, ...db])).code).toBe(0);
  const report = await runCli(['report', first.runId, '--format', 'markdown', ...db]);
  expect(report.stderr).toBe('');
  expect(report.stdout).toContain('| Target | "Sales Ledger"."Line Totals" (upsert, key line id) |');
  expect(report.stdout).toContain('| final | compare | all | passed | 1600 | 0 |');
  // a new transform version makes every partition stale; --only-stale re-runs them without a write
  const stale = await runCli(['stale', writeSpec(usd(2)), '-o', 'json']);
  expect(stale.stderr).toBe('');
  expect((JSON.parse(stale.stdout) as { stale: unknown[] }).stale.length).toBeGreaterThan(1);
  const rerun = await env.start(usd(2), { onlyStale: true });
  expect(await waitForResult(rerun.handle)).toMatchObject({ status: 'succeeded', rowsWritten: 0 });

  // update mode into the same table, on the column whose name has a quote
  await env.db.pool.query(`UPDATE "Sales Ledger"."Line Totals" SET "amount usd" = NULL WHERE "line id" % 7 = 0`);
  const update: SpecInput = { ...usd(3), name: 'spaced-update', target: { table: 'Sales Ledger.Line Totals', key: ['line id'], mode: 'update' } };
  delete update.after;
  expect(await waitForResult((await env.start(update)).handle)).toMatchObject({ status: 'succeeded' });
  expect(await differences('"Sales Ledger"."Line Totals"', expected)).toBe(0);

  // replace mode: a daily rollup into a date column, a week of days per partition
  const rollup: SpecInput = {
    ...base,
    name: 'spaced-rollup',
    partition: { by: 'time', column: 'sold at', size: '7 days' },
    transform: {
      name: 'spaced-daily',
      version: 1,
      sql: `SELECT (c."sold at" AT TIME ZONE 'UTC')::date AS "sold on", sum(c."amount 'cents'") / 100.0 AS "total usd" FROM chunk c GROUP BY 1`,
    },
    target: { table: 'Sales Ledger.Daily Totals', key: ['sold on'], mode: 'replace', partitionColumn: 'sold on' },
  };
  // its sample and its probe of partitions at once recompute whole partitions, and leave the target as it was
  const totalsBefore = (await env.db.pool.query('SELECT count(*)::int AS n FROM "Sales Ledger"."Daily Totals"')).rows[0].n;
  const rollupPlan = await runCli(['plan', writeSpec(rollup), '--measure-writes', '-o', 'json']);
  expect(rollupPlan.stderr).toBe('');
  expect(rollupPlan.code).toBe(0);
  expect(JSON.parse(rollupPlan.stdout).estimate.sample.rows).toBeGreaterThan(0);
  expect((await env.db.pool.query('SELECT count(*)::int AS n FROM "Sales Ledger"."Daily Totals"')).rows[0].n).toBe(totalsBefore);
  expect(await waitForResult((await env.start(rollup)).handle)).toMatchObject({ status: 'succeeded' });
  expect(
    await differences(
      '"Sales Ledger"."Daily Totals"',
      `SELECT ("sold at" AT TIME ZONE 'UTC')::date AS "sold on", (sum("amount 'cents'") / 100.0)::numeric(14,2) AS "total usd" FROM "Sales Ledger"."Line Items" WHERE "user" <> 'u4' GROUP BY 1`,
    ),
  ).toBe(0);
});
