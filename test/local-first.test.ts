/**
 * A partition's first attempt runs as its workflow's local activity (src/workflows/backfill-partition.ts):
 * a small partition finishes inside the workflow task that started it, and a larger one hands over
 * at a chunk boundary to the partition's activity, which carries on from the checkpoint as the
 * same attempt. Both end exact, counted once, on real servers. A worker killed under a local
 * attempt is in test/crash-recovery.test.ts.
 */
import { temporal } from '@temporalio/proto';
import { waitForResult } from '../src/operations';
import { partitionGroupWorkflowId, partitionWorkflowId } from '../src/domain/ids';
import type { PartitionReport } from '../src/domain/types';
import { localAttemptsOf, partitionStarts } from './helpers/histories';
import { useTestEnvironment } from './helpers/environment';
import { diffAgainstExpected, ordersSpec } from './helpers/orders';

const EventType = temporal.api.enums.v1.EventType;
type History = temporal.api.history.v1.IHistory;

const env = useTestEnvironment('local-first', { rows: 24_000 });

const count = (h: History, type: number) => h.events!.filter((e) => e.eventType === type).length;

/** What each local attempt of the partition returned, from its marker (a group's report has one too). */
function localReports(h: History): PartitionReport[] {
  const marker = (e: temporal.api.history.v1.IHistoryEvent) => e.markerRecordedEventAttributes?.details;
  const activityType = (e: temporal.api.history.v1.IHistoryEvent) =>
    (JSON.parse(Buffer.from(marker(e)!.data!.payloads![0].data!).toString()) as { activity_type: string }).activity_type;
  return h
    .events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity' && activityType(e) === 'processPartition')
    .filter((m) => m.markerRecordedEventAttributes!.details!.result)
    .map((m) => JSON.parse(Buffer.from(m.markerRecordedEventAttributes!.details!.result!.payloads![0].data!).toString()) as PartitionReport);
}

/** The inputs the partition's activity was scheduled with. */
function activityInputs(h: History): Record<string, unknown>[] {
  return h
    .events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'processPartition')
    .map((e) => JSON.parse(Buffer.from(e.activityTaskScheduledEventAttributes!.input!.payloads![0].data!).toString()) as Record<string, unknown>);
}

async function ledgerRows(runId: string) {
  const { rows } = await env.db.pool.query<{ partition_id: string; attempts: number; completions: number; chunks: number; rows_read: string }>(
    'SELECT partition_id, attempts, completions, chunks, rows_read FROM backfill.partitions WHERE run_id = $1 ORDER BY ordinal',
    [runId],
  );
  return rows;
}

test('a small partition finishes in its local attempt: one workflow task, no activity task, one attempt in the ledger', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const name = 'local-small';
  const started = await env.start(ordersSpec(env.db.envVar, { name, partition: { by: 'range', column: 'id', size: 6000 }, limits: { chunkSize: 5000 } }));
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0 });

  const rows = await ledgerRows(started.runId);
  expect(rows.length).toBeGreaterThan(1);
  // started through the queue, not eagerly on the run's worker: the local attempts spread over the database's workers
  expect(partitionStarts(await started.handle.fetchHistory()).map((p) => p.eagerlyStarted)).toEqual(rows.map(() => false));
  for (const row of rows) {
    expect({ attempts: row.attempts, completions: row.completions }).toEqual({ attempts: 1, completions: 1 });
    const h = await env.client.workflow.getHandle(partitionWorkflowId(name, started.runId, row.partition_id)).fetchHistory();
    expect(localAttemptsOf(h, 'processPartition')).toEqual([1]);
    expect(localReports(h)[0]).toMatchObject({ partitionId: row.partition_id, status: 'succeeded', reported: true });
    expect(count(h, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)).toBe(0);
    expect(count(h, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)).toBe(1);
    // and no patch marker: a search attribute update per partition is what its input flag avoids
    expect(count(h, EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES)).toBe(0);
  }
});

test('a partition that outlasts its local budget is handed over at a chunk boundary; its activity carries on as the same attempt, and every row is written once', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const name = 'local-handover';
  // partitions of ~1,930 rows in chunks of 1,000; a budget of 1 ms: each local attempt writes one chunk and hands over
  const spec = ordersSpec(env.db.envVar, { name, partition: { by: 'range', column: 'id', size: 6000 }, limits: { chunkSize: 1000 } });
  const started = await env.start(spec, { partitionLocalBudgetMs: 1 });
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0 });
  expect(result.rowsWritten).toBe(result.rowsRead);

  const rows = await ledgerRows(started.runId);
  const twoChunks = rows.filter((r) => r.chunks === 2);
  expect(twoChunks.length).toBeGreaterThan(rows.length / 2);
  for (const row of rows) {
    expect({ attempts: row.attempts, completions: row.completions }).toEqual({ attempts: 1, completions: 1 });
    const h = await env.client.workflow.getHandle(partitionWorkflowId(name, started.runId, row.partition_id)).fetchHistory();
    if (row.chunks === 1) {
      // the last partition's few rows: done in the local attempt's one chunk
      expect(localReports(h)).toEqual([expect.objectContaining({ status: 'succeeded' })]);
      continue;
    }
    expect(localReports(h)).toEqual([expect.objectContaining({ status: 'running', handedOver: true, chunks: 1 })]);
    expect(activityInputs(h)).toEqual([expect.objectContaining({ partitionId: row.partition_id, continues: true })]);
    // the chunk log is one unbroken sequence across the handover: nothing redone, nothing skipped
    const { rows: chunks } = await env.db.pool.query<{ seq: number; key_from: string | null; key_to: string }>(
      'SELECT seq, key_from, key_to FROM backfill.chunks WHERE run_id = $1 AND partition_id = $2 ORDER BY seq',
      [started.runId, row.partition_id],
    );
    expect(chunks.map((c) => c.seq)).toEqual([1, 2]);
    expect(chunks[0].key_from).toBeNull();
    expect(chunks[1].key_from).toBe(chunks[0].key_to);
  }
});

test('partitions of more than two chunks on average start as activities: a local attempt would hand them over at once', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const name = 'local-large';
  // ~1,930 rows a partition in chunks of 500
  const started = await env.start(ordersSpec(env.db.envVar, { name, partition: { by: 'range', column: 'id', size: 6000 }, limits: { chunkSize: 500 } }));
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  for (const row of await ledgerRows(started.runId)) {
    const h = await env.client.workflow.getHandle(partitionWorkflowId(name, started.runId, row.partition_id)).fetchHistory();
    expect(localAttemptsOf(h, 'processPartition')).toEqual([]);
    expect(activityInputs(h)).toEqual([{ database: env.db.envVar, runId: started.runId, partitionId: row.partition_id }]);
  }
});

test('small partitions of a run of many run in groups: each partition once, in its own attempt, reported with its group, linked to the workflow that ran it', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const name = 'local-groups';
  // ~320 rows a partition in chunks of 1,000, some 75 partitions: a run of many small ones
  const spec = ordersSpec(env.db.envVar, { name, partition: { by: 'range', column: 'id', size: 1000 }, limits: { chunkSize: 1000, concurrency: 6 } });
  const started = await env.start(spec);
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0 });

  const { rows } = await env.db.pool.query<{ partition_id: string; attempts: number; completions: number; workflow_id: string }>(
    'SELECT partition_id, attempts, completions, workflow_id FROM backfill.partitions WHERE run_id = $1 ORDER BY ordinal',
    [started.runId],
  );
  expect(rows.length).toBeGreaterThanOrEqual(40);
  for (const row of rows) expect({ attempts: row.attempts, completions: row.completions }).toEqual({ attempts: 1, completions: 1 });
  const groups = new Map<string, string[]>();
  for (const row of rows) groups.set(row.workflow_id, [...(groups.get(row.workflow_id) ?? []), row.partition_id]);
  // at most six may start at once: groups of up to six, far fewer workflows than partitions
  expect(groups.size).toBeLessThanOrEqual(rows.length / 2);
  for (const [workflowId, members] of groups) {
    expect(members.length).toBeLessThanOrEqual(6);
    if (members.length === 1 && !workflowId.includes('/group/')) continue;
    expect(workflowId).toBe(partitionGroupWorkflowId(name, started.runId, members));
    const h = await env.client.workflow.getHandle(workflowId).fetchHistory();
    // every member's local attempt in the group's one workflow task; no activity
    expect(localAttemptsOf(h, 'processPartition')).toEqual(members.map(() => 1));
    expect(count(h, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)).toBe(0);
    // their reports in one signal from that task (report-partitions.ts), and the group closed in it
    expect(localAttemptsOf(h, 'reportPartitions')).toEqual([1]);
    expect(count(h, EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED)).toBe(0);
    expect(count(h, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)).toBe(1);
    expect(
      localReports(h)
        .map((r) => ({ id: r.partitionId, status: r.status, reported: r.reported ?? false }))
        .sort((a, b) => a.id.localeCompare(b.id)),
    ).toEqual(members.map((id) => ({ id, status: 'succeeded', reported: false })).sort((a, b) => a.id.localeCompare(b.id)));
  }
  // the run heard of them in fewer signals than partitions
  const signals = (await started.handle.fetchHistory()).events!.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
  expect(signals.some((e) => e.workflowExecutionSignaledEventAttributes!.signalName === 'partitionsFinished')).toBe(true);
  expect(signals.length).toBeLessThan(rows.length);
});
