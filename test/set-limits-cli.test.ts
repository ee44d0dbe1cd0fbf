/**
 * `backfill set-limits` changes every limit that can change live, from the command line: adaptive
 * chunk sizing on and off, and the guards (replaced whole from a YAML file, or removed). Guard SQL
 * that is not one read-only SELECT, and a guard the schema refuses, exit 2 before Temporal is
 * asked, and the run keeps its limits.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { controlRun, waitForResult } from '../src/operations';
import { getRun } from '../src/ledger/runs';
import { runCli } from './helpers/cli';
import { useTestEnvironment } from './helpers/environment';
import { ordersSpec } from './helpers/orders';

const env = useTestEnvironment('setlimitscli', { rows: 20_000 });

function file(name: string, text: string): string {
  const f = path.join(os.tmpdir(), `set-limits-${process.pid}-${name}.yaml`);
  writeFileSync(f, text);
  return f;
}

test('set-limits sets and clears targetChunkSeconds and guards; bad guard SQL or shape exits 2 and changes nothing', async () => {
  // slow enough to be running for the whole test
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'set-limits-cli',
      partition: { by: 'range', column: 'id', size: 50_000 },
      limits: { chunkSize: 200, concurrency: 1, rowsPerSecond: 400 },
    }),
  );
  const cli = (...args: string[]) => runCli(['set-limits', started.runId, '--database', env.db.envVar, '--reason', 'test', ...args, '-o', 'json']);
  const limitsNow = async () => (await getRun(env.db.pool, started.runId))!.limits;

  const adaptive = await cli('--target-chunk-seconds', '2');
  expect(adaptive.stderr).toBe('');
  expect(JSON.parse(adaptive.stdout).limits).toMatchObject({ targetChunkSeconds: 2 });

  const guards = file('guards', 'custom:\n  - name: queue-depth\n    sql: SELECT 3\n    soft: 10\n    hard: 100\nholdTimeoutSeconds: 120\n');
  const guarded = await cli('--guards', guards);
  expect(guarded.code).toBe(0);
  expect(JSON.parse(guarded.stdout).limits.guards).toMatchObject({
    custom: [{ name: 'queue-depth', sql: 'SELECT 3', soft: 10, hard: 100 }],
    holdTimeoutSeconds: 120,
  });
  expect((await limitsNow()).guards).toMatchObject({ custom: [{ name: 'queue-depth' }] });

  const writes = file('writes', 'custom:\n  - name: sneaky\n    sql: DELETE FROM app.orders RETURNING 1\n    hard: 1\n');
  const refusedSql = await cli('--guards', writes);
  expect(refusedSql.code).toBe(2);
  expect(refusedSql.stderr).toContain(`--guards ${writes}: custom.0.sql`);
  const shapeless = file('shape', 'custom:\n  - name: Bad Name\n    sql: SELECT 1\n    hard: 1\n');
  const refusedShape = await cli('--guards', shapeless);
  expect(refusedShape.code).toBe(2);
  expect(refusedShape.stderr).toContain('guards.custom.0.name must be lowercase letters, digits, _ -');
  expect((await limitsNow()).guards).toMatchObject({ custom: [{ name: 'queue-depth' }] });

  const cleared = await cli('--guards', 'off', '--target-chunk-seconds', 'off');
  expect(cleared.code).toBe(0);
  expect(JSON.parse(cleared.stdout).limits).not.toHaveProperty('guards');
  expect(JSON.parse(cleared.stdout).limits).not.toHaveProperty('targetChunkSeconds');

  await controlRun({ client: env.client, pool: env.db.pool }, (await getRun(env.db.pool, started.runId))!, 'cancel', { actor: 'test', reason: 'enough' });
  expect((await waitForResult(started.handle)).status).toBe('cancelled');
});
