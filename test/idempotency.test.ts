/**
 * Writes are idempotent by construction: rows that are already correct are not rewritten
 * (their xmin stays), a second run of a finished spec writes nothing, a TypeScript
 * transform gives the same rows as SQL, and a run that continues-as-new mid-way (with
 * partitions still running) still ends exact.
 */
import { waitForResult } from '../src/operations';
import type { SpecInput } from '../src/specs/schema';
import { diffAgainstExpected, EXPECTED_SQL, ordersSpec, WHERE, writeModule, writeOrdersUsdModule } from './helpers/orders';
import { useTestEnvironment } from './helpers/environment';

const env = useTestEnvironment('idem', { rows: 210_000 });

async function run(spec: SpecInput, extra: { maxHistoryEvents?: number } = {}) {
  const started = await env.start(spec, { ...extra });
  return { started, result: await waitForResult(started.handle) };
}

async function xmins(where: string): Promise<Map<string, string>> {
  const { rows } = await env.db.pool.query<{ id: string; x: string }>(`SELECT id, xmin::text AS x FROM app.orders_usd WHERE ${where}`);
  return new Map(rows.map((r) => [r.id, r.x]));
}

test('rows already correct keep their xmin, and a second run of the same spec writes 0 rows', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  // a third of the target is already right, a tenth is wrong
  await env.db.pool.query(`INSERT INTO app.orders_usd SELECT * FROM (${EXPECTED_SQL}) e WHERE e.id % 3 = 0`);
  await env.db.pool.query(`INSERT INTO app.orders_usd SELECT id, tenant, created_at, -1 FROM (${EXPECTED_SQL}) e WHERE e.id % 3 <> 0 AND e.id % 10 = 1`);
  const correct = await xmins('id % 3 = 0');
  const wrong = (await xmins('id % 3 <> 0 AND id % 10 = 1')).size;

  const spec = ordersSpec(env.db.envVar, { name: 'idem-xmin' });
  const { result: first } = await run(spec);
  expect(first.status).toBe('succeeded');
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0 });
  expect(first.rowsUnchanged).toBe(correct.size);
  expect(first.rowsWritten).toBe(first.rowsRead - correct.size);
  expect(first.rowsWritten).toBeGreaterThan(wrong);
  expect(await xmins('id % 3 = 0')).toEqual(correct);

  const everything = await xmins('true');
  const { result: second } = await run(spec);
  expect(second).toMatchObject({ status: 'succeeded', rowsWritten: 0, rowsUnchanged: first.rowsRead, rowsRead: first.rowsRead });
  expect(await xmins('true')).toEqual(everything);
});

const FIRST_DAYS = "created_at < timestamptz '2024-03-06'";

test('a TypeScript transform module produces exactly what the SQL statement produces', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const moduleFile = writeOrdersUsdModule(3);
  // the first five days (about 13,000 rows, one partition a day): the module's arithmetic, not its speed, is under test
  const spec = ordersSpec(env.db.envVar, {
    name: 'idem-module',
    source: { table: 'app.orders', key: 'id', where: `${WHERE} AND ${FIRST_DAYS}` },
    partition: { by: 'time', column: 'created_at', size: '1 day' },
    transform: { name: 'orders-usd-ts', version: 3, module: moduleFile },
  });
  const { result } = await run(spec);
  expect(result.status).toBe('succeeded');
  expect(result.partitions.total).toBeGreaterThanOrEqual(5);
  expect(await diffAgainstExpected(env.db.pool, FIRST_DAYS)).toMatchObject({
    missing: 0,
    extra: 0,
    targetRows: result.rowsRead,
    expectedRows: result.rowsRead,
  });
  expect(await diffAgainstExpected(env.db.pool, `NOT (${FIRST_DAYS})`)).toMatchObject({ targetRows: 0 });
  const { result: again } = await run(spec);
  expect(again).toMatchObject({ status: 'succeeded', rowsWritten: 0 });
});

test('a run that continues-as-new while partitions are running still ends exact, each partition counted once', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const spec = ordersSpec(env.db.envVar, {
    name: 'idem-can',
    partition: { by: 'range', column: 'id', size: 20_000 },
    limits: { chunkSize: 5000, concurrency: 3 },
  });
  const { started, result } = await run(spec, { maxHistoryEvents: 40 });
  expect(result.status).toBe('succeeded');
  expect(result.partitions.total).toBeGreaterThanOrEqual(30);
  expect(result.partitions.succeeded).toBe(result.partitions.total);
  const latest = await env.client.workflow.getHandle(started.workflowId).describe();
  expect(latest.runId).not.toBe(started.handle.firstExecutionRunId);
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0, targetRows: result.rowsRead });
  const { rows } = await env.db.pool.query(
    "SELECT count(*)::int AS n FROM backfill.partitions WHERE run_id = $1 AND (status <> 'succeeded' OR completions <> 1)",
    [started.runId],
  );
  expect(rows[0].n).toBe(0);
});

/** Every kind's value cycles with the tenant (1–12): a few thousand rows over several chunks show them all. */
const KINDS_WHERE = "status <> 'void' AND id < 15000";

test('module output of every JS kind lands as PostgreSQL reads it: jsonb, dates, booleans, big numbers, bytea, arrays, awkward strings', async () => {
  await env.db.pool.query(`
    DROP TABLE IF EXISTS app.kinds, app.kinds_arr;
    CREATE TABLE app.kinds (id bigint PRIMARY KEY, doc jsonb, label text, at timestamptz, ok boolean, big numeric, local_at timestamp, raw bytea);
    CREATE TABLE app.kinds_arr (id bigint PRIMARY KEY, doc jsonb, label text, at timestamptz, ok boolean, big numeric, tags text[]);`);
  const moduleFile = (name: string, extra: string) =>
    writeModule(
      name,
      `
      interface Order { id: string; tenant: number }
      export default {
        columns: ['id', 'doc', 'label', 'at', 'ok', 'big', ${extra === 'tags' ? "'tags'" : "'local_at', 'raw'"}],
        reads: ['id', 'tenant'],
        version: 1,
        transform(rows: Order[]) {
          return rows.map((r) => ({
            id: r.id,
            // objects, arrays, a bare JSON string and JSON null (which json_populate_recordset reads as SQL NULL)
            doc: r.tenant % 4 === 0 ? 'plain' : r.tenant % 4 === 1 ? null : { tenant: r.tenant, tags: ['a', 'b,c'], nested: { q: 'say "hi"' } },
            // quotes, commas, braces and backslashes must survive array literals
            label: 'a "b", {c} \\\\ d NULL ' + r.tenant,
            at: new Date(Date.UTC(2024, 0, 1, 0, 0, 0, r.tenant)),
            ok: r.tenant % 2 === 0,
            big: BigInt(r.tenant) * 10n ** 20n + 1n,
            ${extra === 'tags' ? "tags: ['x', r.tenant % 3 === 0 ? null : 'y \"z\"']," : "local_at: new Date(Date.UTC(2024, 5, 1, 12, 0, 0)), raw: '\\\\x0001' + (r.tenant % 256).toString(16).padStart(2, '0'),"}
          }));
        },
      };
      `.replace('BigInt(r.tenant) * 10n ** 20n + 1n', '(BigInt(r.tenant) * 10n ** 20n + 1n).toString()'),
    );
  const expectedSql = (extra: string) => `
    SELECT o.id,
           CASE o.tenant % 4 WHEN 0 THEN '"plain"'::jsonb WHEN 1 THEN NULL
                ELSE jsonb_build_object('tenant', o.tenant, 'tags', jsonb_build_array('a', 'b,c'), 'nested', jsonb_build_object('q', 'say "hi"')) END AS doc,
           'a "b", {c} \\ d NULL ' || o.tenant AS label,
           timestamptz '2024-01-01 00:00:00+00' + o.tenant * interval '1 millisecond' AS at,
           o.tenant % 2 = 0 AS ok,
           o.tenant * 10::numeric ^ 20 + 1 AS big,
           ${extra === 'tags' ? "ARRAY['x', CASE WHEN o.tenant % 3 = 0 THEN NULL ELSE 'y \"z\"' END] AS tags" : "timestamp '2024-06-01 12:00:00' AS local_at, '\\x0001'::bytea || set_byte('\\x00'::bytea, 0, o.tenant % 256) AS raw"}
      FROM app.orders o WHERE ${KINDS_WHERE}`;
  for (const [table, extra] of [
    ['app.kinds', 'plain'],
    ['app.kinds_arr', 'tags'],
  ] as const) {
    const spec = ordersSpec(env.db.envVar, {
      name: `kinds-${extra}`,
      source: { table: 'app.orders', key: 'id', where: KINDS_WHERE },
      limits: { chunkSize: 1000, concurrency: 4 },
      transform: { name: `kinds-${extra}`, version: 1, module: moduleFile(`kinds-${extra}`, extra) },
      target: { table, key: ['id'], mode: 'upsert' },
    });
    const { result } = await run(spec);
    expect(result.status).toBe('succeeded');
    const { rows } = await env.db.pool.query(
      `WITH e AS (${expectedSql(extra)})
       SELECT (SELECT count(*) FROM (TABLE e EXCEPT SELECT * FROM ${table}) x)::int AS missing,
              (SELECT count(*) FROM (SELECT * FROM ${table} EXCEPT TABLE e) x)::int AS extra,
              (SELECT count(*) FROM ${table})::int AS n`,
    );
    expect(rows[0]).toEqual({ missing: 0, extra: 0, n: result.rowsRead });
    // and the values compare equal to what they came from: a second run writes nothing
    const { result: again } = await run(spec);
    expect(again).toMatchObject({ status: 'succeeded', rowsWritten: 0 });
  }
});

test('a chunk whose slices travel partly as COPY text and partly as JSON lands whole, as JSON would have written it', async () => {
  await env.db.pool.query(`
    DROP TABLE IF EXISTS app.mixed;
    CREATE TABLE app.mixed (id bigint PRIMARY KEY, label text, at timestamptz);`);
  // an object goes to a text column as its JSON text, which only JSON carries: one band of ids in
  // each 10,000-row chunk makes its 4,096-row slice go as JSON, the others as COPY text
  const module = writeModule(
    'mixed',
    `interface Order { id: string; tenant: number; created_at: string }
    export default {
      columns: ['id', 'label', 'at'],
      reads: ['id', 'tenant', 'created_at'],
      version: 1,
      transform(rows: Order[]) {
        return rows.map((r) => ({ id: r.id, label: Number(r.id) % 30000 < 300 ? { tenant: r.tenant } : 'tenant ' + r.tenant, at: r.created_at }));
      },
    };\n`,
  );
  const spec = ordersSpec(env.db.envVar, {
    name: 'idem-mixed',
    source: { table: 'app.orders', key: 'id', where: "status <> 'void' AND id < 100000" },
    partition: { by: 'range', column: 'id', size: 50_000 },
    limits: { chunkSize: 10_000, concurrency: 2 },
    transform: { name: 'mixed', version: 1, module },
    target: { table: 'app.mixed', key: ['id'], mode: 'upsert' },
  });
  const { result } = await run(spec);
  expect(result.status).toBe('succeeded');
  const expected = `SELECT id, CASE WHEN id % 30000 < 300 THEN '{"tenant":' || tenant || '}' ELSE 'tenant ' || tenant END AS label, created_at AS at
                      FROM app.orders WHERE status <> 'void' AND id < 100000`;
  const { rows } = await env.db.pool.query(
    `WITH e AS (${expected})
     SELECT (SELECT count(*) FROM (TABLE e EXCEPT SELECT * FROM app.mixed) x)::int AS missing,
            (SELECT count(*) FROM (SELECT * FROM app.mixed EXCEPT TABLE e) x)::int AS extra,
            (SELECT count(*) FROM app.mixed WHERE label LIKE '{%')::int AS objects,
            (SELECT count(*) FROM app.mixed)::int AS n`,
  );
  expect(rows[0]).toMatchObject({ missing: 0, extra: 0, n: result.rowsRead });
  expect(rows[0].objects).toBeGreaterThan(0);
  const { result: again } = await run(spec);
  expect(again).toMatchObject({ status: 'succeeded', rowsWritten: 0 });
});
