/**
 * docs/security.md gives the exact GRANTs of a least-privilege role for workers (and for
 * `plan`/`start`). This test runs those statements, as written there, against a fresh
 * database, runs a whole backfill as that role with an exact result, and shows the role can
 * do nothing else: no DDL, no writes to the source, no ledger migration.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { createPool } from '../src/db/pool';
import { migrateLedger } from '../src/ledger/migrate';
import { waitForResult } from '../src/operations';
import { useTestEnvironment } from './helpers/environment';
import { diffAgainstExpected, ordersSpec } from './helpers/orders';
import { uniqueName } from './helpers/unique';

const env = useTestEnvironment('leastpriv', { rows: 20_000 });
const role = uniqueName('bf_runner');
const RUNNER_VAR = 'BF_TEST_DB_LEASTPRIV_RUNNER';
let runner: pg.Pool;

/** The SQL block between the grants markers of docs/security.md, with this test's names. */
function documentedGrants(): string {
  const doc = readFileSync(path.join(__dirname, '..', 'docs', 'security.md'), 'utf8');
  const block = /<!-- grants:begin -->\s*```sql\n([\s\S]*?)```\s*<!-- grants:end -->/.exec(doc);
  if (!block) throw new Error('docs/security.md has no grants block');
  return block[1].replaceAll('backfill_runner', role).replaceAll('appdb', env.db.name).replace("'change-me'", "'runner-pw'");
}

beforeAll(async () => {
  // the ledger's owner migrates once; the runner never creates anything
  await migrateLedger(env.db.pool);
  await env.db.pool.query(documentedGrants());
  const url = new URL(env.db.url);
  url.username = role;
  url.password = 'runner-pw';
  process.env[RUNNER_VAR] = url.toString();
  runner = createPool(url.toString(), { max: 2 });
});

afterAll(async () => {
  await runner?.end();
  // a role that holds privileges cannot be dropped: the database goes first (env's afterAll),
  // so drop it from the server once that is done
  const admin = new pg.Client({ connectionString: process.env.BACKFILL_TEST_PG_URL });
  await admin.connect();
  await admin.query(`DROP OWNED BY ${role}`).catch(() => undefined);
  await admin.query(`DROP ROLE IF EXISTS ${role}`);
  await admin.end();
});

test('a whole backfill runs as the documented least-privilege role, with an exact result', async () => {
  const started = await env.start(ordersSpec(RUNNER_VAR, { name: 'least-privilege', partition: { by: 'range', column: 'id', size: 20_000 } }));
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0 });
  const { rows } = await env.db.pool.query('SELECT started_by FROM backfill.runs WHERE run_id = $1', [started.runId]);
  expect(rows).toHaveLength(1);
  // the chunks were written by the role, not by the test's superuser
  const { rows: written } = await runner.query('SELECT current_user AS me, count(*)::int AS n FROM app.orders_usd');
  expect(written[0]).toEqual({ me: role, n: result.rowsWritten });
});

test.each([
  ['change the source', 'UPDATE app.orders SET status = status WHERE id = 3'],
  ['delete from the target', 'DELETE FROM app.orders_usd'],
  ['create a table', 'CREATE TABLE app.pwned (x int)'],
  ['create a table in public', 'CREATE TABLE public.pwned (x int)'],
  ['change the ledger structure', 'ALTER TABLE backfill.runs ADD COLUMN pwned int'],
  ['erase the audit record', 'DELETE FROM backfill.run_events'],
  ['read a table the spec does not name', 'SELECT * FROM pg_catalog.pg_authid'],
])('the role cannot %s', async (_what, sql) => {
  await expect(runner.query(sql)).rejects.toMatchObject({ code: '42501' });
});

test('the role cannot migrate the ledger, and says who must', async () => {
  const { rows } = await env.db.pool.query(
    'DELETE FROM backfill.schema_migrations WHERE version = (SELECT max(version) FROM backfill.schema_migrations) RETURNING version, name',
  );
  try {
    await expect(migrateLedger(runner)).rejects.toThrow(
      /^the backfill ledger in this database needs migrating, which this role may not do \(permission denied .*\); run `backfill migrate --database <VAR>` once as the ledger's owner \(docs\/security\.md\)$/,
    );
  } finally {
    await env.db.pool.query('INSERT INTO backfill.schema_migrations (version, name) VALUES ($1, $2)', [rows[0].version, rows[0].name]);
  }
});
