/**
 * The Temporal side is an entry point too: anyone who can start a workflow on the namespace
 * can hand a worker any input, bypassing every check the CLI makes. These tests start the
 * run workflow directly, as such a person would, and show the worker refuses what it must:
 * a database variable not on its allow-list, a module outside its transform directories, a
 * spec whose identifiers carry SQL — and that nothing was connected to, loaded or written.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { newRunId, waitForResult } from '../src/operations';
import { startRunWorkflow } from '../src/operations/run-workflow';
import { loadSpecFile } from '../src/specs/load';
import type { RunWorkflowInput } from '../src/workflows/backfill-run';
import { setLimitsUpdate } from '../src/workflows/messages';
import { pollUntil } from '../src/util/poll-until';
import { FailureType } from '../src/domain/failures';
import { useTestEnvironment } from './helpers/environment';
import { ordersSpec, writeSpec } from './helpers/orders';
import { startTestWorker, uniqueQueue, type TestWorker } from './helpers/temporal';
import { uniqueName } from './helpers/unique';

const env = useTestEnvironment('trust', { rows: 1000 });

/** What a stranger with namespace access would send: a well-formed input, then edited. */
function strangersInput(edit: (input: RunWorkflowInput) => void, spec = ordersSpec(env.db.envVar, { name: 'trust' })): RunWorkflowInput {
  const loaded = loadSpecFile(writeSpec(spec));
  const input: RunWorkflowInput = {
    kind: 'run',
    runId: newRunId(),
    spec: loaded.spec,
    specFile: loaded.file,
    specHash: loaded.specHash,
    transform: loaded.transform,
    startedBy: 'mallory',
  };
  edit(input);
  return input;
}

async function failureOf(handle: WorkflowHandle): Promise<string> {
  try {
    await handle.result();
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    const messages: string[] = [];
    for (let e: Error | undefined = err; e; e = (e as { cause?: Error }).cause) messages.push(e.message);
    return messages.join(' <- ');
  }
  throw new Error('the run succeeded');
}

async function ledgerWritten(): Promise<boolean> {
  const { rows } = await env.db.pool.query("SELECT to_regclass('backfill.runs') IS NOT NULL AS t");
  return rows[0].t;
}

function start(input: RunWorkflowInput, taskQueue = env.worker.taskQueue) {
  return startRunWorkflow(env.client, taskQueue, input, { status: 'pending', summary: 'trust test' });
}

test('a database variable that is not on the worker allow-list is never read: the work is given back for a worker that serves it', async () => {
  process.env.BF_NOT_ALLOWED_URL = process.env[env.db.envVar];
  const handle = await start(strangersInput((i) => (i.spec = { ...i.spec, database: 'BF_NOT_ALLOWED_URL' })));
  // another worker may serve the variable: a refusal hands the task back (retryable), it fails nothing
  const refusal = await pollUntil(
    async () => {
      const pending = (await handle.describe()).raw.pendingActivities?.[0];
      return pending && (pending.attempt ?? 0) > 1 ? pending.lastFailure : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  expect(refusal?.message).toContain(
    'database BF_NOT_ALLOWED_URL is not one this worker serves (BACKFILL_DATABASES=BF_TEST_DB_*); name an allowed variable in the spec, or add BF_NOT_ALLOWED_URL to BACKFILL_DATABASES on the workers',
  );
  expect(refusal?.applicationFailureInfo).toMatchObject({ type: FailureType.WrongDatabase, nonRetryable: false });
  expect((await handle.describe()).status.name).toBe('RUNNING');
  expect(await ledgerWritten()).toBe(false);
  await handle.terminate('test: no worker serves this variable');
});

test('identifiers carrying SQL are refused by the worker as by the CLI', async () => {
  const handle = await start(strangersInput((i) => (i.spec = { ...i.spec, target: { ...i.spec.target, table: 'app.orders_usd; DROP TABLE app.fx' } })));
  expect(await failureOf(handle)).toContain('was started with a spec that is not valid: target.table must be a table name like public.orders');
  expect(await ledgerWritten()).toBe(false);
  const { rows } = await env.db.pool.query("SELECT to_regclass('app.fx') IS NOT NULL AS t");
  expect(rows[0].t).toBe(true);
});

describe('module transforms', () => {
  let worker: TestWorker;
  const allowed = mkdtempSync(path.join(os.tmpdir(), 'bf-allowed-'));
  const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'bf-elsewhere-'));
  beforeAll(async () => {
    worker = await startTestWorker(uniqueQueue('trust-modules'), { trust: { transformDirs: [allowed] } });
  });
  afterAll(() => worker.stop());

  /** A module that proves it was loaded by leaving a file behind. */
  function moduleAt(dir: string): { file: string; marker: string } {
    const marker = path.join(dir, uniqueName('loaded', '-'));
    const file = path.join(dir, `${uniqueName('usd', '-')}.js`);
    writeFileSync(
      file,
      `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'loaded');
       module.exports = { columns: ['id', 'tenant', 'created_at', 'amount_usd'], reads: ['id', 'tenant', 'created_at'],
         transform: (rows) => rows.map((r) => ({ id: r.id, tenant: r.tenant, created_at: r.created_at, amount_usd: 1 })) };\n`,
    );
    return { file, marker };
  }

  function moduleSpec(file: string) {
    return ordersSpec(env.db.envVar, { name: 'trust-module', transform: { name: 'usd', version: 1, module: file } });
  }

  test('a module outside the worker transform directories is never loaded', async () => {
    const outside = moduleAt(elsewhere);
    const handle = await start(
      strangersInput(() => undefined, moduleSpec(outside.file)),
      worker.taskQueue,
    );
    expect(await failureOf(handle)).toContain(
      `transform module ${outside.file} is outside this worker's transform directories (BACKFILL_TRANSFORM_DIRS=${allowed})`,
    );
    expect(existsSync(outside.marker)).toBe(false);
    expect(await ledgerWritten()).toBe(false);
  });

  test('a symlink inside an allowed directory cannot point outside it', async () => {
    const outside = moduleAt(elsewhere);
    const link = path.join(allowed, 'link.js');
    require('node:fs').symlinkSync(outside.file, link);
    const handle = await start(
      strangersInput(() => undefined, moduleSpec(link)),
      worker.taskQueue,
    );
    expect(await failureOf(handle)).toContain("is outside this worker's transform directories");
    expect(existsSync(outside.marker)).toBe(false);
  });

  test('a module inside an allowed directory runs', async () => {
    const inside = moduleAt(allowed);
    const handle = await start(
      strangersInput(() => undefined, moduleSpec(inside.file)),
      worker.taskQueue,
    );
    const result = (await handle.result()) as { status: string };
    expect(result.status).toBe('succeeded');
    expect(existsSync(inside.marker)).toBe(true);
  });
});

// last: it is the one case that lets a run register (the ones above check the ledger stays absent)
test('guard SQL sent with a setLimits update straight through Temporal is parsed by the worker and never run', async () => {
  // a run slow enough to be running when the update lands
  const loaded = strangersInput(
    () => undefined,
    ordersSpec(env.db.envVar, { name: 'trust-guard', limits: { chunkSize: 10, concurrency: 1, rowsPerSecond: 20 } }),
  );
  const handle = await start(loaded);
  const running = () =>
    env.db.pool.query("SELECT 1 FROM backfill.partitions WHERE run_id = $1 AND status = 'running'", [loaded.runId]).then(
      (r) => (r.rowCount ? true : undefined),
      () => undefined,
    );
  expect(await pollUntil(running, { timeoutMs: 20_000, intervalMs: 100 })).toBe(true);
  await handle.executeUpdate(setLimitsUpdate, {
    args: [{ actor: 'mallory', guards: { custom: [{ name: 'innocent', sql: 'SELECT 1; DROP TABLE app.fx', hard: 5 }] } }],
  });
  const result = await waitForResult(handle);
  expect(result.status).toBe('failed');
  const { rows: failed } = await env.db.pool.query('SELECT last_error FROM backfill.partitions WHERE run_id = $1', [loaded.runId]);
  expect(failed[0].last_error).toContain(
    'limits.guards.custom.0.sql must be exactly one statement, a SELECT returning one number (found 2); this worker will not run it',
  );
  const { rows } = await env.db.pool.query("SELECT to_regclass('app.fx') IS NOT NULL AS t");
  expect(rows[0].t).toBe(true);
});

test('a run id already held by another run is refused, by the worker and by start, naming the run that holds it', async () => {
  // what the suite once met by chance: two runs of different specs drawing the same id
  const holder = strangersInput(() => undefined, ordersSpec(env.db.envVar, { name: 'trust-holder' }));
  expect(((await (await start(holder)).result()) as { status: string }).status).toBe('succeeded');
  const taker = strangersInput((i) => (i.runId = holder.runId), ordersSpec(env.db.envVar, { name: 'trust-taker' }));
  const held =
    `run id ${holder.runId} is already taken in this ledger by a run of trust-holder ` +
    `(workflow backfill/trust-holder/${holder.runId}, succeeded, started by mallory at `;
  const refused = await failureOf(await start(taker));
  expect(refused).toContain(held);
  expect(refused).toContain(
    `this run of trust-taker (spec hash ${taker.specHash.slice(0, 12)}) was not registered: a run id names one run only; start again without --run-id to get a new one`,
  );
  const { rows } = await env.db.pool.query('SELECT name FROM backfill.runs WHERE run_id = $1', [holder.runId]);
  expect(rows).toEqual([{ name: 'trust-holder' }]);
  // start checks before anything reaches Temporal, with the same words
  await expect(env.start(ordersSpec(env.db.envVar, { name: 'trust-taker' }), { runId: holder.runId })).rejects.toThrow(held);
});
