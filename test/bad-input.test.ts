/**
 * Bad input, counted: malformed specs and CLI calls, each run as an operator runs it (the
 * built `backfill` command in its own process), each answered with one clear message and
 * exit code 2 — and nothing written: the source's and the target's row counts and xmins,
 * the ledger, the active run's status and the workflows in Temporal are the same after as
 * before. An active (paused) run is there throughout, so control commands meet a real run.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { controlRun, startRun } from '../src/operations';
import { getRun } from '../src/ledger/runs';
import { useTestEnvironment } from './helpers/environment';
import { ordersSpec, writeSpec } from './helpers/orders';
import { temporalAddress } from './helpers/temporal';
import { pollUntil } from '../src/util/poll-until';

const env = useTestEnvironment('badinput', { rows: 2000 });
const CLI = path.join(__dirname, '..', 'dist', 'client.js');
let active: { runId: string; name: string };

beforeAll(async () => {
  // a run that writes one chunk and then waits: paused, it stays active for every case below
  const started = await startRun(
    { client: env.client, taskQueue: env.worker.taskQueue },
    {
      specFile: writeSpec(ordersSpec(env.db.envVar, { name: 'bad-input-active', limits: { chunkSize: 10, concurrency: 1, rowsPerSecond: 1 } })),
      actor: 'test',
    },
  );
  active = { runId: started.runId, name: started.name };
  await controlRun({ client: env.client, pool: env.db.pool }, (await getRun(env.db.pool, started.runId))!, 'pause', { actor: 'test' });
  // settle: the partition sees the pause at its next look and stops writing
  await pollUntil(
    async () =>
      (await env.db.pool.query('SELECT 1 FROM backfill.partitions WHERE run_id = $1 AND hold_reason IS NOT NULL', [started.runId])).rowCount ? true : undefined,
    { timeoutMs: 20_000, intervalMs: 200 },
  );
});

function cli(args: string[]): Promise<{ code: number; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress(), BACKFILL_TASK_QUEUE: env.worker.taskQueue, DATABASE_URL: env.db.url, LOG_LEVEL: 'warn' },
        maxBuffer: 10 * 1024 * 1024,
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Everything a bad call could have changed. */
async function snapshot(): Promise<string> {
  const { rows } = await env.db.pool.query(`
    SELECT (SELECT count(*) || '/' || sum(xmin::text::bigint) FROM app.orders) AS source,
           (SELECT count(*) || '/' || coalesce(sum(xmin::text::bigint), 0) FROM app.orders_usd) AS target,
           (SELECT string_agg(run_id || ':' || status || ':' || paused || ':' || cancel_requested || ':' || control_version, ',' ORDER BY run_id) FROM backfill.runs) AS runs,
           (SELECT count(*) || '/' || sum(rows_written) || '/' || sum(chunks) FROM backfill.partitions) AS partitions,
           (SELECT count(*) FROM backfill.run_events) AS events,
           (SELECT count(*) FROM backfill.chunks) AS chunks,
           (SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace) AS public_relations`);
  // the workflows on this file's task queue, where its commands would start them: other test files may run beside it
  const workflows = await env.client.workflow.count(`TaskQueue = '${env.worker.taskQueue}'`);
  return JSON.stringify({ ...rows[0], workflows: workflows.count });
}

// specs are made when a case runs: the test database (and its variable) exists only then
type Lazy = () => unknown;
const base: Lazy = () => ordersSpec(env.db.envVar);
const spec =
  (overrides: Record<string, unknown>): Lazy =>
  () => ({ ...ordersSpec(env.db.envVar), ...overrides });
const limits = (l: Record<string, unknown>) => spec({ limits: { chunkSize: 1000, concurrency: 2, ...l } });
const SPEC = '<spec>';
const RUN = '<active run>';

function bomb(): string {
  const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i <= 9; i++)
    lines.push(
      `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
        .fill(`*${String.fromCharCode(96 + i)}`)
        .join(',')}]`,
    );
  return `${lines.join('\n')}\n`;
}

type Case = [label: string, args: string[], input: unknown, message: RegExp];

const cases: Case[] = [
  // the file itself
  ['a YAML alias bomb ("billion laughs")', ['start', SPEC], bomb(), /is not valid YAML: .*alias.*; write the values out instead of expanding aliases/i],
  [
    'a list of two million values (a 17 MB file)',
    ['start', SPEC],
    `${'name: x\npartition:\n  by: list\n  column: tenant\n  values: ['}${Array.from({ length: 2_000_000 }, (_, i) => i).join(',')}]\n`,
    /is 1\d\.\d MB; a spec may be at most 1 MB/,
  ],
  ['an empty file', ['plan', SPEC], '', /must be a YAML mapping with name, reason, database/],
  ['a YAML list instead of a mapping', ['plan', SPEC], '- name: x\n', /must be a YAML mapping/],
  ['a key given twice', ['start', SPEC], 'name: a\nname: b\n', /is not valid YAML: Map keys must be unique/],
  ['a file that does not exist', ['plan', '/nonexistent/spec.yaml'], undefined, /\/nonexistent\/spec\.yaml: cannot be read \(ENOENT.*\); check the path/],
  ['a directory instead of a file', ['plan', '/tmp'], undefined, /cannot be read \(EISDIR.*\); check the path/],
  // the schema
  ['an unknown field', ['start', SPEC], spec({ reasons: 'typo' }), /has unknown field reasons; did you mean reason\? check the spelling/],
  ['a name with capitals', ['start', SPEC], spec({ name: 'Orders' }), /name must match \[a-z0-9-\]\+/],
  ['a URL instead of a variable name', ['plan', SPEC], spec({ database: 'postgres://u:p@db/prod' }), /database must be the NAME of an environment variable/],
  [
    'a database variable that is not set',
    ['start', SPEC],
    spec({ database: 'BF_BAD_INPUT_UNSET' }),
    /database names BF_BAD_INPUT_UNSET, which is not set; export it/,
  ],
  [
    'SQL in a table name',
    ['start', SPEC],
    spec({ source: { table: 'app.orders; DROP TABLE app.fx', key: 'id' } }),
    /source\.table must be a table name like public\.orders/,
  ],
  [
    'both a SQL and a module transform',
    ['plan', SPEC],
    spec({ transform: { name: 't', version: 1, sql: 'SELECT 1', module: 'x.ts' } }),
    /transform needs exactly one of sql/,
  ],
  [
    'a module that does not exist',
    ['plan', SPEC],
    spec({ transform: { name: 't', version: 1, module: 'missing.ts' } }),
    /transform\.module names .*missing\.ts, which cannot be read/,
  ],
  ['a range size of 0', ['plan', SPEC], spec({ partition: { by: 'range', column: 'id', size: 0 } }), /partition\.size must be a positive integer for 'range'/],
  [
    'a time interval with an unknown unit',
    ['plan', SPEC],
    spec({ partition: { by: 'time', column: 'created_at', size: '1 fortnight' } }),
    /partition\.size must be an interval such as "1 day"/,
  ],
  ['an unknown partitioning', ['plan', SPEC], spec({ partition: { by: 'hash', column: 'id' } }), /partition\.by must be one of range, time, list/],
  [
    'an empty list of values',
    ['plan', SPEC],
    spec({ partition: { by: 'list', column: 'tenant', values: [] } }),
    /partition\.values must list at least one value/,
  ],
  [
    'a list of 100,001 values',
    ['start', SPEC],
    () => JSON.stringify(spec({ partition: { by: 'list', column: 'tenant', values: Array.from({ length: 100_001 }, (_, i) => i) } })()),
    /partition\.values must list at most 100000 values/,
  ],
  [
    'a list value of 2,000 characters',
    ['plan', SPEC],
    spec({ partition: { by: 'list', column: 'currency', values: ['x'.repeat(2000)] } }),
    /partition\.values\.0 must be at most 1000 characters/,
  ],
  ['a number too large for any column (1e400)', ['plan', SPEC], () => stringifyWith(spec({})(), 'size: 200000', 'size: 1e400'), /partition\.size/],
  ['chunkSize 0', ['start', SPEC], limits({ chunkSize: 0 }), /limits\.chunkSize .*(>=1|at least 1|too small)/i],
  ['concurrency 1000', ['plan', SPEC], limits({ concurrency: 1000 }), /limits\.concurrency .*(<=500|at most 500|too big)/i],
  ['a fractional chunk size', ['plan', SPEC], limits({ chunkSize: 1.5 }), /limits\.chunkSize must be a whole number \(got 1\.5\)/],
  [
    'rowsPerSecond 0.001 (once a timer overflow that left the run unthrottled)',
    ['start', SPEC],
    limits({ rowsPerSecond: 0.001 }),
    /limits\.rowsPerSecond must be at least 1 row a second \(got 0\.001\); to stop writing, pause the run/,
  ],
  ['a statement timeout of 0', ['plan', SPEC], limits({ statementTimeoutSeconds: 0 }), /limits\.statementTimeoutSeconds/],
  [
    'a window in an unknown time zone',
    ['plan', SPEC],
    limits({ window: { start: '22:00', end: '06:00', timeZone: 'Mars/Olympus' } }),
    /limits\.window\.timeZone/,
  ],
  [
    'a custom guard with a bad name',
    ['plan', SPEC],
    limits({ guards: { custom: [{ name: 'Bad Name', sql: 'SELECT 1', hard: 1 }] } }),
    /limits\.guards\.custom\.0\.name must be lowercase/,
  ],
  [
    'replace mode without a partition column',
    ['plan', SPEC],
    spec({ target: { table: 'app.orders_usd', key: ['id'], mode: 'replace' } }),
    /target\.partitionColumn is required when mode is 'replace'/,
  ],
  // the spec against the database
  [
    'a target in the ledger schema',
    ['start', SPEC],
    spec({ target: { table: 'backfill.runs', key: ['run_id'], mode: 'upsert' } }),
    /target\.table is in the backfill schema/,
  ],
  [
    'a source table that does not exist',
    ['start', SPEC],
    spec({ source: { table: 'app.nope', key: 'id' } }),
    /source\.table names app\.nope, which does not exist/,
  ],
  [
    'a target without a unique key',
    ['start', SPEC],
    spec({ target: { table: 'app.orders_usd', key: ['tenant'], mode: 'upsert' } }),
    /target\.key \(tenant\) has no unique index on app\.orders_usd/,
  ],
  [
    'time partitions over a non-time column',
    ['start', SPEC],
    spec({ partition: { by: 'time', column: 'tenant', size: '1 day' } }),
    /partition\.column tenant is integer; by: time needs a timestamp or date column/,
  ],
  [
    'range partitions over a text column',
    ['plan', SPEC],
    spec({ partition: { by: 'range', column: 'currency', size: 10 } }),
    /partition\.column currency is text; by: range with size needs an integer column \(use count: N for ranges of about equal rows/,
  ],
  [
    'an empty scope',
    ['start', SPEC],
    spec({ source: { table: 'app.orders', key: 'id', where: "status = 'no such status'" } }),
    /source\.where selects no rows of app\.orders: there is nothing to backfill/,
  ],
  [
    'a where filter that escapes its parentheses',
    ['start', SPEC],
    spec({ source: { table: 'app.orders', key: 'id', where: 'true); COMMIT; CREATE TABLE public.pwned(); SELECT (1' } }),
    /source\.where does not parse/,
  ],
  [
    'a transform that deletes',
    ['start', SPEC],
    spec({ transform: { name: 't', version: 1, sql: 'WITH d AS (DELETE FROM app.orders RETURNING id) SELECT c.id FROM chunk c' } }),
    /transform\.sql contains DELETE/,
  ],
  [
    'a volatile transform',
    ['start', SPEC],
    spec({
      transform: {
        name: 't',
        version: 1,
        sql: 'SELECT c.id, c.tenant, c.created_at, extract(epoch FROM clock_timestamp())::numeric(14,2) AS amount_usd FROM chunk c',
      },
    }),
    /transform\.sql calls volatile clock_timestamp/,
  ],
  // the command line
  [
    '-o yaml on cancel (once: cancelled, then failed to print)',
    ['cancel', RUN, '--reason', 'x', '--yes', '-o', 'yaml'],
    undefined,
    /option '-o, --output <format>' argument 'yaml' is invalid\. Allowed choices are text, json/,
  ],
  ['-o yaml on status', ['status', RUN, '-o', 'yaml'], undefined, /argument 'yaml' is invalid/],
  ['cancel without a reason', ['cancel', RUN], undefined, /required option '--reason <text>' not specified/],
  ['status of an unknown run', ['status', 'no-such-run'], undefined, /unknown run no-such-run in the ledger of DATABASE_URL; list runs with: backfill list/],
  ['pause of an unknown run', ['pause', 'no-such-run'], undefined, /unknown run no-such-run in the ledger of DATABASE_URL/],
  [
    'cancel of an unknown workflow id',
    ['cancel', 'backfill/orders-usd/no-such-run', '--reason', 'x'],
    undefined,
    /unknown run backfill\/orders-usd\/no-such-run in the ledger/,
  ],
  ['retry-failed of an unknown run', ['retry-failed', 'no-such-run'], undefined, /unknown run no-such-run in the ledger/],
  [
    'a ledger variable that is not set',
    ['status', RUN, '--database', 'BF_BAD_INPUT_NOPE'],
    undefined,
    /environment variable BF_BAD_INPUT_NOPE is not set: the ledger is read from the database whose URL --database names/,
  ],
  ['set-limits --concurrency 0', ['set-limits', RUN, '--concurrency', '0'], undefined, /concurrency must be an integer from 1 to 500 \(got 0\)/],
  [
    'set-limits --chunk-size 2000000',
    ['set-limits', RUN, '--chunk-size', '2000000'],
    undefined,
    /chunkSize must be an integer from 1 to 1000000 \(got 2000000\)/,
  ],
  ['set-limits --concurrency 1.5', ['set-limits', RUN, '--concurrency', '1.5'], undefined, /concurrency must be an integer from 1 to 500 \(got 1\.5\)/],
  [
    'set-limits --rows-per-second 0.001',
    ['set-limits', RUN, '--rows-per-second', '0.001'],
    undefined,
    /rowsPerSecond must be a number from 1 to 100000000, or null to remove the cap \(got 0\.001\)/,
  ],
  ['set-limits --rows-per-second fast', ['set-limits', RUN, '--rows-per-second', 'fast'], undefined, /--rows-per-second must be a number \(got "fast"\)/],
  ['set-limits with no limit', ['set-limits', RUN], undefined, /no limit given/],
  ['set-limits --window 25:00-26:00', ['set-limits', RUN, '--window', '25:00-26:00'], undefined, /window\.start/],
  ['start with a run id that is not one', ['start', SPEC, '--run-id', 'Bad Id'], base, /--run-id must match/],
  ['an unknown command', ['frobnicate'], undefined, /unknown command 'frobnicate'/],
  ['plan without a spec', ['plan'], undefined, /missing required argument 'spec'/],
];

function stringifyWith(value: unknown, from: string, to: string): string {
  const { stringify } = require('yaml') as typeof import('yaml');
  const text = stringify(value);
  if (!text.includes(from)) throw new Error(`the case expects "${from}" in the spec`);
  return text.replace(from, to);
}

test(`the table holds at least forty cases (${cases.length})`, () => {
  expect(cases.length).toBeGreaterThanOrEqual(40);
});

test.each(cases)('%s: exit 2, one clear message, nothing written', async (_label, args, input, message) => {
  const file = input === undefined ? undefined : writeSpec(typeof input === 'function' ? (input as Lazy)() : input);
  const argv = args.map((a) => (a === SPEC ? file! : a === RUN ? active.runId : a));
  const before = await snapshot();
  const { code, stderr } = await cli(argv);
  expect(stderr).toMatch(message);
  expect(stderr).not.toMatch(/^\s+at /m); // a message, never a stack trace
  expect(code).toBe(2);
  expect(await snapshot()).toBe(before);
});

test('the active run is still paused and never cancelled by a refused command; a proper cancel then cancels it', async () => {
  const run = await getRun(env.db.pool, active.runId);
  expect(run).toMatchObject({ status: 'paused', paused: true, cancel_requested: false });
  const { code, stdout } = await cli(['cancel', active.runId, '--reason', 'the test is over', '--yes', '-o', 'json']);
  expect(code).toBe(0);
  expect(JSON.parse(stdout)).toMatchObject({ runId: active.runId, action: 'cancel', applied: true });
});
