/**
 * A TypeScript transform is frozen when its run starts: the module and every file it imports
 * are bundled, the bundle's hash is the run's code hash, and workers run the bundle stored in
 * the ledger. An edit on disk mid-run (of the module or of a helper it imports) changes
 * nothing in that run; the next run picks it up under a new hash; a worker whose sources
 * differ from the starter's refuses to register the run, writing nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { newRunId, verifyRun, waitForResult } from '../src/operations';
import { startRunWorkflow } from '../src/operations/run-workflow';
import { getRun } from '../src/ledger/runs';
import { listEvents } from '../src/ledger/events';
import { loadSpecFile } from '../src/specs/load';
import type { SpecInput } from '../src/specs/schema';
import { pollUntil } from '../src/util/poll-until';
import { diffAgainstExpected, ordersSpec, writeSpec } from './helpers/orders';
import { useTestEnvironment } from './helpers/environment';

const env = useTestEnvironment('frozen', { rows: 60_000 });

const RIGHT_RATES = '{ USD: 1000000n, EUR: 1083200n, GBP: 1265000n, JPY: 6712n }';
const WRONG_RATES = '{ USD: 1000000n, EUR: 2000000n, GBP: 1265000n, JPY: 6712n }';

/** A module importing two helpers, as a real transform would: rates, and the money arithmetic. */
function writeModule(): { dir: string; module: string; rates: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'backfill-frozen-'));
  const rates = path.join(dir, 'rates.ts');
  writeFileSync(rates, `export const RATES: Record<string, bigint> = ${RIGHT_RATES};\n`);
  writeFileSync(
    path.join(dir, 'money.ts'),
    `// rates in millionths, rounded half away from zero like PostgreSQL's round()
    export function usd(cents: string, rate: bigint): string {
      const c = (BigInt(cents) * rate + 500000n) / 1000000n;
      return (c / 100n).toString() + '.' + (c % 100n).toString().padStart(2, '0');
    }\n`,
  );
  const module = path.join(dir, 'orders-usd.ts');
  writeFileSync(
    module,
    `import { RATES } from './rates';
    import { usd } from './money';
    interface Order { id: string; tenant: number; created_at: string; currency: string | null; amount_cents: string | null }
    export default {
      columns: ['id', 'tenant', 'created_at', 'amount_usd'],
      reads: ['id', 'tenant', 'created_at', 'currency', 'amount_cents'],
      transform(rows: Order[]) {
        return rows.map((r) => {
          const rate = r.currency === null ? undefined : RATES[r.currency];
          return { id: r.id, tenant: r.tenant, created_at: r.created_at, amount_usd: rate === undefined || r.amount_cents === null ? null : usd(r.amount_cents, rate) };
        });
      },
    };\n`,
  );
  return { dir, module, rates };
}

function moduleSpec(name: string, module: string, limits: SpecInput['limits'] = { chunkSize: 2000, concurrency: 2 }): SpecInput {
  return ordersSpec(env.db.envVar, {
    name,
    partition: { by: 'range', column: 'id', size: 20_000 },
    transform: { name: 'orders-usd-ts', version: 1, module },
    limits,
  });
}

const eurRows = async () =>
  Number((await env.db.pool.query("SELECT count(*) AS n FROM app.orders WHERE currency = 'EUR' AND amount_cents IS NOT NULL AND status <> 'void'")).rows[0].n);

test('a run computes with the code it froze while its module and a helper change on disk; the next run takes the change under a new code hash', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const files = writeModule();
  // slow enough that most partitions run after the edit
  const started = await env.start(moduleSpec('frozen-edit', files.module, { chunkSize: 2000, concurrency: 1, rowsPerSecond: 15_000 }));
  const succeeded = async () =>
    (await env.db.pool.query("SELECT count(*)::int AS n FROM backfill.partitions WHERE run_id = $1 AND status = 'succeeded'", [started.runId])).rows[0]
      .n as number;
  expect(await pollUntil(async () => ((await succeeded()) >= 1 ? true : undefined), { timeoutMs: 60_000, intervalMs: 50 })).toBe(true);
  // the helper now computes wrong amounts, and the module on disk would not even load
  writeFileSync(files.rates, `export const RATES: Record<string, bigint> = ${WRONG_RATES};\n`);
  writeFileSync(files.module, 'throw new Error("this file is not what the run froze");\n');
  const doneAtEdit = await succeeded();

  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(result.partitions.total - doneAtEdit).toBeGreaterThanOrEqual(3);
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0, targetRows: result.rowsRead });

  // the ledger keeps the code itself, with the files inside it
  const run = (await getRun(env.db.pool, started.runId))!;
  const { rows: artifacts } = await env.db.pool.query('SELECT code, inputs, builtins, bundler FROM backfill.transform_artifacts WHERE code_hash = $1', [
    run.transform_hash,
  ]);
  expect(artifacts).toHaveLength(1);
  expect(artifacts[0].inputs).toEqual(expect.arrayContaining(['rates.ts', 'money.ts', 'orders-usd.ts']));
  expect(artifacts[0].code).toContain('1083200n');
  expect(artifacts[0].bundler).toMatch(/^esbuild \d/);
  const registered = (await listEvents(env.db.pool, started.runId)).find((e) => e.kind === 'registered')!;
  expect(registered.detail).toMatchObject({ codeHash: run.transform_hash, bundled: expect.arrayContaining(['rates.ts']) });

  // verify recomputes with the stored code too, with no module left on disk at all
  rmSync(files.dir, { recursive: true });
  const previousDirs = process.env.BACKFILL_TRANSFORM_DIRS;
  process.env.BACKFILL_TRANSFORM_DIRS = os.tmpdir();
  try {
    expect((await verifyRun(env.db.pool, run)).clean).toBe(true);
  } finally {
    if (previousDirs === undefined) delete process.env.BACKFILL_TRANSFORM_DIRS;
    else process.env.BACKFILL_TRANSFORM_DIRS = previousDirs;
  }

  // the same worker, the next run: the edited helper is part of the code, so the hash and the result change
  const edited = writeModule();
  writeFileSync(edited.rates, `export const RATES: Record<string, bigint> = ${WRONG_RATES};\n`);
  const next = await env.start(moduleSpec('frozen-edit', edited.module));
  const nextResult = await waitForResult(next.handle);
  expect(nextResult.status).toBe('succeeded');
  const nextRun = (await getRun(env.db.pool, next.runId))!;
  expect(nextRun.transform_hash).not.toBe(run.transform_hash);
  expect(nextResult.rowsWritten).toBe(await eurRows());
  expect((await diffAgainstExpected(env.db.pool)).extra).toBe(await eurRows());
});

test("a worker whose module sources differ from the starter's refuses to register the run and writes nothing", async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const files = writeModule();
  const loaded = loadSpecFile(writeSpec(moduleSpec('frozen-differs', files.module)));
  // the worker's copy of a helper is not the one the run was started with
  writeFileSync(files.rates, `export const RATES: Record<string, bigint> = ${WRONG_RATES};\n`);
  const runId = newRunId();
  const handle = await startRunWorkflow(
    env.client,
    env.worker.taskQueue,
    { kind: 'run', runId, spec: loaded.spec, specFile: loaded.file, specHash: loaded.specHash, transform: loaded.transform, startedBy: 'test' },
    { status: 'pending', summary: 'frozen test' },
  );
  const failure = await handle.result().then(
    () => 'succeeded',
    (err) => {
      if (!(err instanceof WorkflowFailedError)) throw err;
      const messages: string[] = [];
      for (let e: Error | undefined = err; e; e = (e as { cause?: Error }).cause) messages.push(e.message);
      return messages.join(' <- ');
    },
  );
  expect(failure).toMatch(
    /bundles to code [0-9a-f]{12} on this worker, but the run was started with code [0-9a-f]{12}; the module or a file it imports differs here \(.*rates\.ts.*\)/,
  );
  expect(await getRun(env.db.pool, runId)).toBeUndefined();
  expect(Number((await env.db.pool.query('SELECT count(*) AS n FROM app.orders_usd')).rows[0].n)).toBe(0);
});
