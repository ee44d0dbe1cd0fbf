/**
 * Spec SQL is someone else's text. Each way it could try to escape its field — end the
 * check's transaction, break out of the where filter's parentheses, modify data from a
 * SELECT, lock rows, smuggle a second statement into a guard, carry SQL in a table or column
 * name (quoted, it names nothing) — is refused by `plan` and `start` with the field and what
 * is allowed (exit 2), and the database is left exactly as it was: no new table, no changed
 * row, no ledger.
 */
import { exitCodeFor } from '../src/cli/output';
import { checkSpec, startRun } from '../src/operations';
import { useTestEnvironment } from './helpers/environment';
import { ordersSpec, TRANSFORM_SQL, WHERE, writeSpec } from './helpers/orders';

const env = useTestEnvironment('escapes', { rows: 2000, worker: false });

const spec = (overrides: Record<string, unknown>) => ({ ...ordersSpec(env.db.envVar), ...overrides });
const where = (w: string) => spec({ source: { table: 'app.orders', key: 'id', where: w } });
const transform = (sql: string) => spec({ transform: { name: 't', version: 1, sql } });
const guards = (g: Record<string, unknown>) => spec({ limits: { chunkSize: 1000, concurrency: 2, guards: g } });

const cases: [string, () => unknown, string][] = [
  [
    'a where filter that commits and creates a table',
    () => where('true); COMMIT; CREATE TABLE public.pwned(); SELECT (1'),
    'invalid spec F: source.where does not parse: syntax error at or near ")" at character 5',
  ],
  [
    'a where filter that breaks out of its parentheses',
    () => where('x) OR (true'),
    'invalid spec F: source.where does not parse: syntax error at or near ")" at character 2',
  ],
  [
    'a where filter with a second statement',
    () => where('true; DELETE FROM app.orders'),
    "invalid spec F: source.where must be one condition on the source rows, such as created_at >= '2024-01-01' (found 2 statements)",
  ],
  [
    'a where filter that locks rows',
    () => where('id IN (SELECT id FROM app.orders FOR UPDATE)'),
    'invalid spec F: source.where locks rows (FOR UPDATE / FOR SHARE); remove the locking clause: chunks never lock source rows',
  ],
  [
    'a transform that commits and creates a table',
    () => transform(`${TRANSFORM_SQL}; COMMIT; CREATE TABLE public.pwned()`),
    'invalid spec F: transform.sql must be exactly one statement, a SELECT over `chunk` (found 3)',
  ],
  [
    'a transform with a data-modifying WITH',
    () => transform('WITH d AS (DELETE FROM app.orders RETURNING id) SELECT c.id FROM chunk c'),
    'invalid spec F: transform.sql contains DELETE (a data-modifying WITH); it may only read',
  ],
  [
    'a transform that is SELECT … INTO',
    () => transform('SELECT c.id INTO public.pwned FROM chunk c'),
    'invalid spec F: transform.sql is SELECT … INTO, which creates a table; remove INTO',
  ],
  [
    'a transform that copies password hashes into the target (the connection is a superuser)',
    () => transform('SELECT c.id, c.tenant, c.created_at, length(a.rolpassword)::numeric AS amount_usd FROM chunk c CROSS JOIN pg_authid a'),
    'invalid spec F: transform.sql reads pg_authid, which holds password hashes: spec SQL may not read credential catalogs, whatever the database role (docs/security.md)',
  ],
  [
    'a transform that hides that read in SQL text',
    () =>
      transform(
        "SELECT c.id, c.tenant, c.created_at, length(query_to_xml('select rolpassword from pg_authid', true, false, '')::text)::numeric AS amount_usd FROM chunk c",
      ),
    'invalid spec F: transform.sql calls query_to_xml(), which runs SQL given as text: spec SQL may not, whatever the database role (docs/security.md)',
  ],
  [
    'a transform that locks rows',
    () => transform(`${TRANSFORM_SQL} FOR UPDATE`),
    'invalid spec F: transform.sql locks rows (FOR UPDATE / FOR SHARE); remove the locking clause: chunks never lock source rows',
  ],
  [
    'a transform that is not a SELECT',
    () => transform('DELETE FROM app.orders RETURNING id'),
    'invalid spec F: transform.sql must be a SELECT over `chunk` (found DELETE)',
  ],
  [
    'a probe guard with a second statement',
    () => guards({ probeMs: { sql: 'SELECT 1; DROP TABLE app.orders', hard: 100 } }),
    'invalid spec F: limits.guards.probeMs.sql must be exactly one statement, a SELECT returning one number (found 2)',
  ],
  [
    'a custom guard that writes',
    () => guards({ custom: [{ name: 'x', sql: 'UPDATE app.fx SET usd_rate = 0 RETURNING 1', hard: 1 }] }),
    'invalid spec F: limits.guards.custom.0.sql must be a SELECT returning one number (found UPDATE)',
  ],
  [
    'a transform calling a volatile function',
    () => transform('SELECT c.id, c.tenant, c.created_at, extract(epoch FROM clock_timestamp())::numeric(14,2) AS amount_usd FROM chunk c'),
    'invalid spec F: transform.sql calls volatile clock_timestamp (clock_timestamp()): it returns something new on every call, so a retried or re-run chunk would write different values; ' +
      'compute the value from the row instead (e.g. md5(c.id::text) for a stable pseudo-random value), or declare transform.allowVolatile: true (recorded in the run)',
  ],
  [
    'a transform that changes a session setting for later chunks',
    () => transform("SELECT c.id, c.tenant, c.created_at, length(set_config('search_path', 'app', false))::numeric(14,2) AS amount_usd FROM chunk c"),
    'invalid spec F: transform.sql calls volatile set_config (set_config(text,text,boolean)): it returns something new on every call, so a retried or re-run chunk would write different values; ' +
      'compute the value from the row instead (e.g. md5(c.id::text) for a stable pseudo-random value), or declare transform.allowVolatile: true (recorded in the run)',
  ],
  [
    'a transform using an operator backed by a volatile function',
    () => transform('SELECT c.id, c.tenant, c.created_at, (c.amount_cents OPERATOR(app.%+%) 1)::numeric(14,2) AS amount_usd FROM chunk c'),
    'invalid spec F: transform.sql calls volatile operator app.%+% (app.jitter(bigint,integer)): it returns something new on every call, so a retried or re-run chunk would write different values; ' +
      'compute the value from the row instead (e.g. md5(c.id::text) for a stable pseudo-random value), or declare transform.allowVolatile: true (recorded in the run)',
  ],
  [
    'a table name with one dot that carries SQL (quoted, it names nothing)',
    () => spec({ source: { table: 'app.orders; DROP TABLE app', key: 'id', where: WHERE } }),
    'invalid spec F: source.table names app.orders; DROP TABLE app, which does not exist; check the name and its schema',
  ],
  [
    'a key column name that closes a literal and a parenthesis',
    () => spec({ source: { table: 'app.orders', key: "id') OR ('1' = '1", where: WHERE } }),
    "invalid spec F: source.key names column id') OR ('1' = '1, which app.orders does not have; columns: id, created_at, tenant, currency, amount_cents, status",
  ],
  [
    'a target column name that ends the statement',
    () => spec({ target: { table: 'app.orders_usd', key: ['id); DROP TABLE app.fx; --'], mode: 'upsert' } }),
    'invalid spec F:23:7: target.key.0 must be a column name as the catalog has it (no dots, double quotes or control characters, no spaces at either end, at most 63 characters) (got "id); DROP TABLE app.fx; --")',
  ],
  [
    'a table name with a double quote',
    () => spec({ target: { table: 'app."orders_usd', key: ['id'], mode: 'upsert' } }),
    'invalid spec F:21:10: target.table must be a table name like public.orders (each part: no dots, double quotes or control characters, no spaces at either end, at most 63 characters) (got "app.\\"orders_usd")',
  ],
  [
    'a where filter calling a volatile function',
    () => where("created_at < clock_timestamp() - interval '1 day'"),
    'invalid spec F: source.where calls volatile clock_timestamp (clock_timestamp()): the scope would change while the run walks it; filter on stored values and stable functions such as now() only',
  ],
];

beforeAll(async () => {
  await env.db.pool.query(`
    CREATE FUNCTION app.jitter(bigint, integer) RETURNS bigint VOLATILE LANGUAGE sql AS 'SELECT $1 + $2';
    CREATE OPERATOR app.%+% (LEFTARG = bigint, RIGHTARG = integer, FUNCTION = app.jitter)`);
});

async function snapshot(): Promise<string> {
  const { rows } = await env.db.pool.query(`
    SELECT (SELECT count(*) FROM app.orders) AS orders, (SELECT sum(xmin::text::bigint) FROM app.orders) AS xmins,
           (SELECT string_agg(usd_rate::text, ',' ORDER BY currency) FROM app.fx) AS fx,
           to_regclass('public.pwned') AS pwned, to_regclass('backfill.runs') AS ledger,
           (SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace) AS public_relations`);
  return JSON.stringify(rows[0]);
}

test.each(cases)('%s is refused by plan and start, and nothing changes', async (_label, make, expected) => {
  const before = await snapshot();
  const file = writeSpec(make());
  for (const attempt of [() => checkSpec(file), () => startRun({ client: env.client, taskQueue: 'never-polled' }, { specFile: file })]) {
    const err = await attempt().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message.split(file).join('F')).toBe(expected);
    expect(exitCodeFor(err)).toBe(2);
  }
  expect(await snapshot()).toBe(before);
  expect(JSON.parse(before).pwned).toBeNull();
});

test('a where filter ending in a -- comment plans exactly as without it (the comment cannot swallow engine SQL)', async () => {
  const plain = await checkSpec(writeSpec(where(WHERE)));
  const commented = await checkSpec(writeSpec(where(`${WHERE} -- paid orders only`)));
  expect(commented.partitions).toEqual(plain.partitions);
});

test('a SQL transform records the tables and functions it reads', async () => {
  const checked = await checkSpec(writeSpec(spec({})));
  expect(checked.shape.transformReads).toEqual({ tables: ['app.fx'], functions: ['round'], operators: ['*', '/'] });
});

test('a transform that declares allowVolatile may call volatile functions, and the run records which', async () => {
  const sql = 'SELECT c.id, c.tenant, c.created_at, extract(epoch FROM clock_timestamp())::numeric(14,2) AS amount_usd FROM chunk c';
  const checked = await checkSpec(writeSpec(spec({ transform: { name: 't', version: 1, sql, allowVolatile: true } })));
  expect(checked.shape.transformReads).toEqual({
    tables: [],
    functions: ['clock_timestamp', 'pg_catalog.extract'],
    volatile: ['clock_timestamp (clock_timestamp())'],
  });
});
