/**
 * docs/security.md gives the exact GRANTs of a least-privilege role for workers (and for
 * `plan`/`start`). This test runs those statements, as written there, against a fresh
 * database, runs a whole backfill as that role with an exact result, and shows the role can
 * do nothing else: no DDL, no writes to the source, no ledger migration.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { createPool } from '../src/db/pool';
import { migrateLedger } from '../src/ledger/migrate';
import { waitForResult } from '../src/operations';
import { useTestEnvironment } from './helpers/environment';
import { diffAgainstExpected, ordersSpec, writeOrdersUsdModule, writeSpec } from './helpers/orders';
import { runCli } from './helpers/cli';
import { runImages } from '../src/undo/run-images';
import { checkAndPlan } from '../src/preflight/check-and-plan';
import { rowSecurityProblems } from '../src/preflight/role-posture';
import { loadSpecFile } from '../src/specs/load';
import { uniqueName } from './helpers/unique';
import { createRunnerRole, dropRunnerRole } from './helpers/least-privilege-role';

const execFileAsync = promisify(execFile);
const env = useTestEnvironment('leastpriv', { rows: 20_000 });
const role = uniqueName('bf_runner');
const RUNNER_VAR = 'BF_TEST_DB_LEASTPRIV_RUNNER';
let runner: pg.Pool;

beforeAll(async () => {
  // the ledger's owner migrates once; the runner never creates anything
  const url = await createRunnerRole(env.db, role);
  process.env[RUNNER_VAR] = url;
  runner = createPool(url, { max: 2 });
});

afterAll(async () => {
  await runner?.end();
  // env's afterAll drops the database first; the role goes after it
  await dropRunnerRole(role);
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
  // its before-images: a table the role created in backfill_undo, one image per row written
  const { rows: images } = await runner.query(
    `SELECT (SELECT count(*)::int FROM ${await runImages(env.db.pool, started.runId)} i) AS n, (SELECT tableowner FROM pg_tables WHERE schemaname = 'backfill_undo' AND tablename = $1) AS owner`,
    [started.runId],
  );
  expect(images[0]).toEqual({ n: result.rowsWritten, owner: role });
});

test('a TypeScript transform runs as the role too: its chunks reach the output table by COPY, exact', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const moduleFile = writeOrdersUsdModule(1);
  const spec = ordersSpec(RUNNER_VAR, {
    name: 'least-privilege-ts',
    partition: { by: 'range', column: 'id', size: 20_000 },
    transform: { name: 'orders-usd-ts', version: 1, module: moduleFile },
  });
  const result = await waitForResult((await env.start(spec)).handle);
  expect(result.status).toBe('succeeded');
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0 });
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

test('compose’s worker role (deploy/worker-role.sql, run twice with psql as compose runs it) holds exactly the ledger privileges the documented role holds', async () => {
  const composeRole = uniqueName('bf_compose_worker');
  const psql = () =>
    execFileAsync('psql', [
      env.db.url,
      '--set=ON_ERROR_STOP=1',
      `--set=role=${composeRole}`,
      '--set=password=compose-pw',
      `--set=database=${env.db.name}`,
      `--file=${path.join(__dirname, '..', 'deploy', 'worker-role.sql')}`,
    ]);
  try {
    await psql();
    await psql(); // compose runs it on every `up`
    const privileges = async (who: string) => {
      const { rows } = await env.db.pool.query(
        `SELECT c.relname, a.privilege_type
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace, aclexplode(c.relacl) a
          WHERE n.nspname = 'backfill' AND a.grantee = $1::regrole
          ORDER BY 1, 2`,
        [who],
      );
      const { rows: other } = await env.db.pool.query(
        `SELECT has_schema_privilege($1, 'backfill', 'USAGE') AS schema, has_schema_privilege($1, 'backfill', 'CREATE') AS create_in_schema,
                has_schema_privilege($1, 'backfill_undo', 'USAGE') AS undo_schema, has_schema_privilege($1, 'backfill_undo', 'CREATE') AS create_in_undo,
                has_database_privilege($1, current_database(), 'TEMPORARY') AS temporary, has_database_privilege($1, current_database(), 'CREATE') AS create_in_database,
                r.rolsuper, r.rolbypassrls, r.rolcanlogin
           FROM pg_roles r WHERE r.rolname = $1`,
        [who],
      );
      return { tables: rows.map((r) => `${r.relname}:${r.privilege_type}`), ...other[0] };
    };
    const documented = await privileges(role);
    expect(documented.tables.length).toBeGreaterThan(10);
    expect(await privileges(composeRole)).toEqual(documented);
  } finally {
    await env.db.pool.query(`DROP OWNED BY ${composeRole}`);
    await env.db.pool.query(`DROP ROLE ${composeRole}`);
  }
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

describe('the connection’s powers and row-level security, checked before anything runs', () => {
  const specFile = () => writeSpec(ordersSpec(RUNNER_VAR, { name: uniqueName('lp-plan', '-') }));
  const superSpec = () => writeSpec(ordersSpec(env.db.envVar, { name: uniqueName('lp-super', '-') }));
  const superuserLine =
    /^database: connected as \S+, a superuser: the spec's SQL would run with powers no backfill needs; run plan, start and the workers as a least-privilege role/;

  test('plan warns about a superuser connection, and says nothing of the least-privilege role', async () => {
    const asSuper = await runCli(['plan', superSpec(), '-o', 'json']);
    expect(asSuper.code).toBe(0);
    expect(JSON.parse(asSuper.stdout).warnings).toEqual(expect.arrayContaining([expect.stringMatching(superuserLine)]));
    const asRunner = await runCli(['plan', specFile(), '-o', 'json']);
    expect(asRunner.code).toBe(0);
    expect((JSON.parse(asRunner.stdout).warnings as string[]).filter((w) => w.startsWith('database: connected as'))).toEqual([]);
  });

  test('BACKFILL_REQUIRE_LEAST_PRIVILEGE=1 refuses a superuser at plan, at start, and at the worker’s registration', async () => {
    const strict = { BACKFILL_REQUIRE_LEAST_PRIVILEGE: '1' };
    const plan = await runCli(['plan', superSpec()], strict);
    expect(plan.code).toBe(2);
    expect(plan.stderr).toMatch(/database connected as \S+, a superuser: .*; BACKFILL_REQUIRE_LEAST_PRIVILEGE=1 refuses it/);
    const start = await runCli(['start', superSpec()], strict);
    expect(start.code).toBe(2);
    expect(start.stderr).toMatch(/BACKFILL_REQUIRE_LEAST_PRIVILEGE=1 refuses it/);
    expect((await runCli(['plan', specFile()], strict)).code).toBe(0);
    // the worker checks its own connection with the same function, under its own environment
    process.env.BACKFILL_REQUIRE_LEAST_PRIVILEGE = '1';
    try {
      const loaded = loadSpecFile(superSpec());
      const checked = await checkAndPlan(env.db.pool, loaded.resolved, loaded.transform);
      expect(checked).toMatchObject({ ok: false, problems: [{ path: 'database', message: expect.stringMatching(/refuses it$/) }] });
      const asRunner = await checkAndPlan(runner, loaded.resolved, loaded.transform);
      expect(asRunner).toMatchObject({ ok: true, role: { role, superuser: false, bypassRls: false } });
    } finally {
      delete process.env.BACKFILL_REQUIRE_LEAST_PRIVILEGE;
    }
    expect(await runsNamed('lp-super')).toBe(0);
  });

  test('a source or target whose row-level security filters the role is refused, naming the policies; the owner is not filtered', async () => {
    const pool = env.db.pool;
    await pool.query(`
      ALTER TABLE app.orders ENABLE ROW LEVEL SECURITY;
      CREATE POLICY tenant_one ON app.orders FOR SELECT USING (tenant = 1);`);
    try {
      const plan = await runCli(['plan', specFile()]);
      expect(plan.code).toBe(2);
      expect(plan.stderr).toContain(
        `source.table app.orders: row-level security applies to ${role} on app.orders (policies tenant_one); the run would read only the rows its policies show and call the backfill complete. Run as a role the policies do not filter`,
      );
      // the owner (here a superuser) sees every row
      expect((await runCli(['plan', superSpec()])).code).toBe(0);
    } finally {
      await pool.query('DROP POLICY tenant_one ON app.orders; ALTER TABLE app.orders DISABLE ROW LEVEL SECURITY;');
    }
    await pool.query('ALTER TABLE app.orders_usd ENABLE ROW LEVEL SECURITY');
    try {
      const plan = await runCli(['plan', specFile()]);
      expect(plan.code).toBe(2);
      expect(plan.stderr).toContain(`target.table app.orders_usd: row-level security applies to ${role} on app.orders_usd (no policy: every row hidden)`);
    } finally {
      await pool.query('ALTER TABLE app.orders_usd DISABLE ROW LEVEL SECURITY');
    }
    expect((await runCli(['plan', specFile()])).code).toBe(0);
  });

  test('row-level security on one leaf of a partitioned source is found', async () => {
    const pool = env.db.pool;
    await pool.query(`
      CREATE TABLE app."Events" (id bigint, at date, amount_cents bigint, PRIMARY KEY (at, id)) PARTITION BY RANGE (at);
      CREATE TABLE app."Events_2024" PARTITION OF app."Events" FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
      CREATE TABLE app."Events_2025" PARTITION OF app."Events" FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
      INSERT INTO app."Events" SELECT n, date '2024-06-01' + (n % 400), n FROM generate_series(1, 1000) n;
      ALTER TABLE app."Events_2025" ENABLE ROW LEVEL SECURITY;`);
    try {
      const spec = { source: { table: 'app.Events' }, target: { table: 'app.orders_usd' } } as Parameters<typeof rowSecurityProblems>[1];
      expect(await rowSecurityProblems(runner, spec, role)).toEqual([
        {
          path: 'source.table',
          message: expect.stringContaining(`app.Events: row-level security applies to ${role} on app."Events_2025" (no policy: every row hidden)`),
        },
      ]);
    } finally {
      await pool.query('DROP TABLE app."Events"');
    }
  });
});

async function runsNamed(prefix: string): Promise<number> {
  const { rows } = await env.db.pool.query("SELECT count(*)::int AS n FROM backfill.runs WHERE name LIKE $1 || '%'", [prefix]);
  return rows[0].n;
}
