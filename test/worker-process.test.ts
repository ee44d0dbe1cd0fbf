/**
 * The worker as operators deploy it: started exactly as the Dockerfile (and so
 * docker-compose) starts it, it serves one Prometheus endpoint with the backfill's metrics
 * beside the SDK's, and logs JSON that carries run and partition ids — the SDK core's own
 * warnings included.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { Client } from '@temporalio/client';
import { startRun, waitForResult } from '../src/operations';
import { freePort } from '../src/dev/temporal-server';
import { createTestDatabase, type TestDatabase } from './helpers/db';
import { createOrders, ordersSpec, writeSpec } from './helpers/orders';
import { temporalAddress, testClient, uniqueQueue } from './helpers/temporal';

let db: TestDatabase;
let client: Client;
let closeClient: () => Promise<void>;
let worker: ChildProcess | undefined;
let logs = '';

beforeAll(async () => {
  db = await createTestDatabase('proc');
  await createOrders(db.pool, 30_000);
  ({ client, close: closeClient } = await testClient());
});

afterAll(async () => {
  worker?.kill('SIGKILL');
  await closeClient?.();
  await db?.drop();
});

function metric(text: string, name: string, runId: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`run_id="${runId}"`));
  if (!line) throw new Error(`metric ${name} for run ${runId} not found`);
  return Number(line.split(' ').pop());
}

const ROOT = path.join(__dirname, '..');

/** The image's ENTRYPOINT + CMD, as exec-form JSON arrays, run from the checkout (the image's WORKDIR). */
function dockerWorkerCommand(): string[] {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const instruction = (name: string) => {
    const line = dockerfile.split('\n').find((l) => l.startsWith(`${name} `));
    if (!line) throw new Error(`the Dockerfile has no ${name}`);
    return JSON.parse(line.slice(name.length + 1)) as string[];
  };
  return [...instruction('ENTRYPOINT'), ...instruction('CMD')];
}

test("docker-compose runs the worker service with the image's own command", () => {
  const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, { image?: string; build?: { context: string }; command?: string[] }>;
  };
  // the image this Dockerfile builds (once, by worker-image) is the one the worker runs
  expect(compose.services['worker-image'].build?.context).toBe('.');
  expect(compose.services.worker.image).toBe(compose.services['worker-image'].image);
  const [, , ...cmd] = dockerWorkerCommand();
  expect(compose.services.worker.command ?? cmd).toEqual(cmd);
  expect(dockerWorkerCommand()).toEqual(['node', 'dist/client.js', 'worker']);
});

test('the worker serves backfill and SDK metrics on one Prometheus endpoint and logs JSON with run and partition ids', async () => {
  const port = await freePort();
  const taskQueue = uniqueQueue('proc');
  const [node, ...args] = dockerWorkerCommand();
  expect(node).toBe('node');
  worker = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: temporalAddress(),
      BACKFILL_TASK_QUEUE: taskQueue,
      BACKFILL_DATABASES: db.envVar,
      LOG_LEVEL: 'info',
      BACKFILL_METRICS_ADDRESS: `127.0.0.1:${port}`,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  worker.stderr!.on('data', (d: Buffer) => (logs += d.toString()));

  const spec = ordersSpec(db.envVar, { name: 'proc', partition: { by: 'range', column: 'id', size: 30_000 }, limits: { chunkSize: 4000, concurrency: 2 } });
  const started = await startRun({ client, taskQueue }, { specFile: writeSpec(spec), actor: 'test' });
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');

  // the SDK exports on an interval: poll until the counters have caught up
  let text = '';
  const deadline = Date.now() + 30_000;
  for (;;) {
    text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    if (text.includes(`run_id="${started.runId}"`) && metric(text, 'backfill_rows_written_total', started.runId) === result.rowsWritten) break;
    if (Date.now() > deadline) throw new Error(`metrics never reached ${result.rowsWritten} rows written:\n${text.slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  expect(metric(text, 'backfill_rows_read_total', started.runId)).toBe(result.rowsRead);
  expect(metric(text, 'backfill_rows_unchanged_total', started.runId)).toBe(result.rowsUnchanged);
  const { rows } = await db.pool.query('SELECT sum(chunks)::int AS chunks FROM backfill.partitions WHERE run_id = $1', [started.runId]);
  expect(metric(text, 'backfill_chunks_total', started.runId)).toBe(rows[0].chunks);
  expect(text).toMatch(/^backfill_chunk_duration_bucket\{/m);
  expect(text).toMatch(/^temporal_activity_execution_latency_bucket\{/m);

  const finished = logs
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === 'partition finished' && l.runId === started.runId);
  expect(finished.map((l) => l.partitionId).sort()).toEqual(
    (await db.pool.query('SELECT partition_id FROM backfill.partitions WHERE run_id = $1 ORDER BY partition_id', [started.runId])).rows.map(
      (r) => r.partition_id,
    ),
  );
});

test("the SDK core's own warnings are JSON lines too: a worker that lost its Temporal server says so in the log's format", async () => {
  // the worker reaches the server through a proxy this test closes under it
  const [host, port] = temporalAddress().split(':');
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((inbound) => {
    const outbound = net.connect(Number(port), host);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('error', () => undefined);
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  let stderr = '';
  const lost = spawn(process.execPath, dockerWorkerCommand().slice(1), {
    cwd: ROOT,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`,
      BACKFILL_TASK_QUEUE: uniqueQueue('lost'),
      BACKFILL_DATABASES: db.envVar,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  lost.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    const polling = Date.now() + 30_000;
    while (sockets.size === 0 && Date.now() < polling) await new Promise((r) => setTimeout(r, 200));
    expect(sockets.size).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 1000));
    proxy.close();
    for (const s of sockets) s.destroy();
    const deadline = Date.now() + 60_000;
    while (!stderr.includes('"sdkComponent":"core"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
    const lines = stderr.split('\n').filter((l) => l.trim() !== '');
    // every line parses: core printed nothing in its own format
    const parsed = lines.map((l) => JSON.parse(l) as { level: number; name: string; sdkComponent?: string; msg: string });
    expect(parsed).toContainEqual(expect.objectContaining({ level: 40, name: 'temporal-sdk', sdkComponent: 'core', msg: expect.stringMatching(/retried/) }));
  } finally {
    lost.kill('SIGKILL');
    proxy.close();
  }
}, 120_000);
