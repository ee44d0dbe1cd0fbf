/**
 * Workflow code must replay the histories it produced: recorded histories under
 * test/histories (kept from earlier versions, so a non-deterministic change fails here)
 * and a fresh run's executions (continued as new) and a partition's history.
 * RECORD_HISTORIES=1 saves the fresh ones to test/histories.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { Worker } from '@temporalio/worker';
import { waitForResult } from '../src/operations';
import { ordersSpec } from './helpers/orders';
import { temporalAddress, workflowBundle } from './helpers/temporal';
import { useTestEnvironment } from './helpers/environment';

const env = useTestEnvironment('replay', { rows: 20_000 });

const HISTORIES = path.join(__dirname, 'histories');

async function replay(history: unknown, workflowId: string): Promise<void> {
  await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, workflowId);
}

test('recorded histories replay without non-determinism', async () => {
  const files = existsSync(HISTORIES) ? readdirSync(HISTORIES).filter((f) => f.endsWith('.json')) : [];
  expect(files.length).toBeGreaterThan(0);
  for (const file of files) {
    await replay(JSON.parse(readFileSync(path.join(HISTORIES, file), 'utf8')), file.replace(/\.json$/, ''));
  }
});

test("a fresh run with a pause, a resume and continue-as-new replays: the run's executions and a partition", async () => {
  // eight partitions: each adds its start and its report to the run's history, so a bound of 60
  // events is crossed however few progress signals a fast machine sends
  const spec = ordersSpec(env.db.envVar, {
    name: 'replay',
    partition: { by: 'range', column: 'id', size: 2500 },
    limits: { chunkSize: 1000, concurrency: 2 },
  });
  const started = await env.start(spec, { maxHistoryEvents: 60 });
  await started.handle.signal('pause', { actor: 'test', reason: 'replay' });
  await started.handle.signal('resume', { actor: 'test', reason: 'replay' });
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');

  const runs = await executionChain(started.workflowId, started.handle.firstExecutionRunId);
  expect(runs.length).toBeGreaterThanOrEqual(2);
  const partition = await env.client.workflow.getHandle(`${started.workflowId}/id:000000000-000002500`).describe();
  const executions = [...runs.map((runId) => ({ workflowId: started.workflowId, runId })), { workflowId: partition.workflowId, runId: partition.runId }];
  for (const wf of executions) {
    const history = await env.client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    await replay(history, wf.workflowId);
    if (process.env.RECORD_HISTORIES) record(wf.workflowId, wf.runId, `${wf.workflowId === started.workflowId ? 'run' : 'partition'}-${wf.runId.slice(0, 8)}`);
  }
});

test('a fresh run of many small partitions replays: the run and one of its groups', async () => {
  // some 80 partitions of ~250 rows in chunks of 1,000: a run of many small ones, started in groups
  const spec = ordersSpec(env.db.envVar, {
    name: 'replay-groups',
    partition: { by: 'range', column: 'id', size: 800 },
    limits: { chunkSize: 1000, concurrency: 4 },
  });
  const started = await env.start(spec);
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  const { rows } = await env.db.pool.query<{ workflow_id: string }>(
    "SELECT workflow_id FROM backfill.partitions WHERE run_id = $1 AND workflow_id LIKE '%/group/%' ORDER BY ordinal LIMIT 1",
    [started.runId],
  );
  expect(rows).toHaveLength(1);
  const group = await env.client.workflow.getHandle(rows[0].workflow_id).describe();
  const run = await env.client.workflow.getHandle(started.workflowId).describe();
  for (const wf of [
    { workflowId: run.workflowId, runId: run.runId, kind: 'run' },
    { workflowId: group.workflowId, runId: group.runId, kind: 'group' },
  ]) {
    await replay(await env.client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory(), wf.workflowId);
    if (process.env.RECORD_HISTORIES) record(wf.workflowId, wf.runId, `${wf.kind}-${wf.runId.slice(0, 8)}`);
  }
});

/** Saves an execution's history to test/histories, as the CLI exports it (what `temporal workflow show -o json` gives operators). */
function record(workflowId: string, runId: string, name: string): void {
  mkdirSync(HISTORIES, { recursive: true });
  const json = execFileSync(process.env.TEMPORAL_CLI!, ['workflow', 'show', '--address', temporalAddress(), '-w', workflowId, '-r', runId, '-o', 'json']);
  writeFileSync(path.join(HISTORIES, `${name}.json`), json);
}

/** The run's executions, first to last, followed through their continue-as-new events (visibility may lag). */
async function executionChain(workflowId: string, firstRunId: string): Promise<string[]> {
  const chain = [firstRunId];
  for (;;) {
    const history = await env.client.workflow.getHandle(workflowId, chain[chain.length - 1]).fetchHistory();
    const last = history.events?.[history.events.length - 1];
    const next = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (!next) return chain;
    chain.push(next);
  }
}
