/**
 * Malformed specs: each gives one clear error naming the file, line, field, value and
 * fix, exits as bad input, and writes nothing (no ledger schema, no workflow started).
 */
import { exitCodeFor } from '../src/cli/output';
import { startRun } from '../src/operations';
import { ordersSpec, TRANSFORM_SQL, writeSpec } from './helpers/orders';
import { stringify } from 'yaml';
import { useTestEnvironment } from './helpers/environment';

const env = useTestEnvironment('specs', { rows: 1000, worker: false });

async function startError(spec: unknown): Promise<{ message: string; file: string; exitCode: number }> {
  const file = writeSpec(spec);
  try {
    await startRun({ client: env.client, taskQueue: 'never-polled' }, { specFile: file });
  } catch (err) {
    return { message: (err as Error).message.split(file).join('F'), file, exitCode: exitCodeFor(err) };
  }
  throw new Error('the spec was accepted');
}

function spec(overrides: Record<string, unknown>) {
  return { ...ordersSpec('BF_TEST_DB_SPECS'), ...overrides };
}

const cases: [string, () => unknown, string][] = [
  [
    'a missing field',
    () => {
      const s: Record<string, unknown> = spec({});
      delete s.reason;
      return s;
    },
    'invalid spec F:1:1: reason is required (a string); see "The spec" in the README',
  ],
  [
    'a wrong type',
    () => spec({ partition: { by: 'range', column: 'id', size: '1 day' } }),
    `invalid spec F:11:9: partition.size must be a positive integer for 'range' (a width in key units) (got "1 day"); use by: time for intervals`,
  ],
  [
    'an unknown field (a typo)',
    () => spec({ limits: { chunksize: 10 } }),
    'invalid spec F:26:14: limits has unknown field chunksize; did you mean chunkSize? check the spelling against "The spec" in the README (or: backfill schema)',
  ],
  [
    'an identifier carrying SQL',
    () => spec({ source: { table: 'app.orders; DROP TABLE app.orders', key: 'id' } }),
    'invalid spec F:5:10: source.table must be a table name like public.orders (each part: no dots, double quotes or control characters, no spaces at either end, at most 63 characters) (got "app.orders; DROP TABLE app.orders")',
  ],
  [
    'a URL instead of a variable name',
    () => spec({ database: 'postgres://u:p@db/prod' }),
    'invalid spec F:3:11: database must be the NAME of an environment variable holding the URL (e.g. DATABASE_URL), never the URL (got "postgres://u:p@db/prod")',
  ],
  [
    'a variable that is not set',
    () => spec({ database: 'BF_TEST_UNSET_VARIABLE' }),
    'invalid spec F: database names BF_TEST_UNSET_VARIABLE, which is not set; export it with the PostgreSQL URL',
  ],
  [
    'an unknown table',
    () => spec({ source: { table: 'app.nope', key: 'id' } }),
    'invalid spec F: source.table names app.nope, which does not exist; check the name and its schema',
  ],
  [
    'an unknown column',
    () => spec({ source: { table: 'app.orders', key: 'order_id' } }),
    'invalid spec F: source.key names column order_id, which app.orders does not have; columns: id, created_at, tenant, currency, amount_cents, status',
  ],
  [
    'a key without a unique index',
    () => spec({ source: { table: 'app.orders', key: 'tenant' } }),
    'invalid spec F: source.key tenant has no unique index on app.orders; keyset chunks need one: CREATE UNIQUE INDEX ON app.orders (tenant)',
  ],
  [
    'a target key without a unique index',
    () => spec({ target: { table: 'app.orders_usd', key: ['tenant'], mode: 'upsert' } }),
    'invalid spec F: target.key (tenant) has no unique index on app.orders_usd; writes match rows by it: CREATE UNIQUE INDEX ON app.orders_usd (tenant)',
  ],
  [
    'a SQL transform that never reads chunk',
    () => spec({ transform: { name: 't', version: 1, sql: 'SELECT id, tenant FROM app.orders' } }),
    'invalid spec F: transform.sql never reads `chunk`; the transform must SELECT from the relation chunk (the source rows of one chunk), e.g. SELECT c.id, … FROM chunk c',
  ],
  [
    'output columns not in the target',
    () => spec({ transform: { name: 't', version: 1, sql: 'SELECT c.id, c.status AS state FROM chunk c' } }),
    'invalid spec F: transform outputs state, which app.orders_usd does not have; output only target columns (it has id, tenant, created_at, amount_usd)',
  ],
  [
    'an output of the wrong type',
    () => spec({ transform: { name: 't', version: 1, sql: 'SELECT c.id, c.status AS amount_usd FROM chunk c' } }),
    'invalid spec F: transform.sql output does not fit app.orders_usd: column "amount_usd" is of type numeric but expression is of type text (SQLSTATE 42804); hint: You will need to rewrite or cast the expression.; cast the column in the SELECT to the target\'s type',
  ],
  [
    'a transform that does not compile',
    () => spec({ transform: { name: 't', version: 1, sql: 'SELEC c.id FROM chunk c' } }),
    'invalid spec F: transform.sql does not parse: syntax error at or near "SELEC" at character 1',
  ],
  [
    'replace mode without a partition column',
    () => spec({ target: { table: 'app.orders_usd', key: ['id'], mode: 'replace' } }),
    "invalid spec F:21:3: target.partitionColumn is required when mode is 'replace': the target column holding each partition's value (e.g. the day of a daily rollup)",
  ],
  [
    'a where filter that does not compile',
    () => spec({ source: { table: 'app.orders', key: 'id', where: 'stauts = 1' } }),
    'invalid spec F: source.where does not compile against app.orders: column "stauts" does not exist (SQLSTATE 42703); hint: Perhaps you meant to reference the column "s.status".; it is a SQL condition on the source rows',
  ],
];

test.each(cases)('%s is refused with a clear error, and nothing is written', async (_label, make, expected) => {
  const { message, exitCode } = await startError(make());
  expect(message).toBe(expected);
  expect(exitCode).toBe(2);
  const { rows } = await env.db.pool.query("SELECT to_regclass('backfill.runs') AS t");
  expect(rows[0].t).toBeNull();
  const started = await env.client.workflow.count("BackfillName = 'orders-usd'");
  expect(started.count).toBe(0);
});

test('invalid YAML points at the line', async () => {
  const text = stringify(ordersSpec('BF_TEST_DB_SPECS')).replace('mode: upsert', 'mode: [upsert');
  const { message } = await startError(text);
  expect(message).toMatch(/^invalid spec F:\d+:\d+: is not valid YAML: /);
});

test('the transform is parsed by the PostgreSQL parser as written (a syntax error names the character)', async () => {
  const { message } = await startError(spec({ transform: { name: 't', version: 1, sql: `${TRANSFORM_SQL} WHERE` } }));
  expect(message).toBe(`invalid spec F: transform.sql does not parse: syntax error at end of input at character ${TRANSFORM_SQL.length + 7}`);
});
