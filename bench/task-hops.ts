/**
 * Where a one-row partition's time goes in Temporal, hop by hop: a run of BENCH_TINY one-row
 * partitions at BENCH_CONCURRENCY, BENCH_ROUNDS times, then the run's history and every
 * partition's read back: how long the run's child starts took, its workflow tasks, and each
 * partition's first workflow task, activity and close — mean, median and the slowest. It found
 * the dev server's ~45 ms transfer-queue wait on every hop and its ~2 s stalls of a partition's
 * first workflow task (bench/RESULTS.md, "Where the demo's seconds go"), and the production
 * server's wait for the run workflow's lock ("Where a one-row partition's time goes").
 * Run: npm run bench:hops   (DATABASE_URL to use a server; BENCH_SERVER (dev: as `demo` starts
 * it; or production), BENCH_TINY (300), BENCH_CONCURRENCY (20), BENCH_ROUNDS (2))
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { stringify } from 'yaml';
import { at, historyEvents, partitionTimes, partitionWorkflowIds, reportSignals, type HistoryEvent } from './partition-histories';
import { startRun, waitForResult } from '../src/operations';
import { say, startBenchEnvironment, type BenchEnvironment } from './harness';
import { createTinyTable, tinySpec } from './tiny';

const EventType = temporal.api.enums.v1.EventType;

const SERVER = process.env.BENCH_SERVER === 'production' ? 'production' : 'dev';
const PARTITIONS = Number(process.env.BENCH_TINY || 300);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY || 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 2);

/** Samples of each hop, in milliseconds. */
class Hops {
  readonly samples = new Map<string, number[]>();
  add(hop: string, ms: number): void {
    if (!Number.isFinite(ms)) return;
    const list = this.samples.get(hop) ?? [];
    list.push(ms);
    this.samples.set(hop, list);
  }
  rows(): string[] {
    return [...this.samples].map(([hop, values]) => {
      const sorted = [...values].sort((a, b) => a - b);
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      return `| ${hop} | ${mean.toFixed(1)} | ${sorted[Math.floor(sorted.length / 2)].toFixed(1)} | ${sorted[sorted.length - 1].toFixed(0)} | ${values.length} |`;
    });
  }
}

/** The run's side: its child starts (initiated → started; runs recorded while partitions were children) and its workflow tasks. */
function runHops(events: HistoryEvent[], hops: Hops): number {
  const initiated = new Map<string, number>();
  let scheduled = 0;
  let started = 0;
  let tasks = 0;
  for (const e of events) {
    switch (e.eventType) {
      case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
        initiated.set(String(e.eventId), at(e));
        break;
      case EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED:
        hops.add('run: a child start, initiated → started', at(e) - initiated.get(String(e.childWorkflowExecutionStartedEventAttributes!.initiatedEventId))!);
        break;
      case EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
        scheduled = at(e);
        break;
      case EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
        started = at(e);
        hops.add('run: workflow task scheduled → started', started - scheduled);
        break;
      case EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
        tasks++;
        hops.add('run: workflow task started → completed', at(e) - started);
        break;
    }
  }
  return tasks;
}

/** A partition's side: its first workflow task, its activity, its close. */
function partitionHops(events: HistoryEvent[], hops: Hops): void {
  const nth = (type: number, n = 0) => {
    const e = events.filter((x) => x.eventType === type)[n];
    return e ? at(e) : NaN;
  };
  const start = nth(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
  const closed = at(events[events.length - 1]);
  hops.add('partition: started → first workflow task started', nth(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) - start);
  hops.add(
    'partition: first workflow task started → completed',
    nth(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) - nth(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED),
  );
  hops.add('partition: activity scheduled → started', nth(EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED) - nth(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED));
  hops.add('partition: activity started → completed', nth(EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) - nth(EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED));
  hops.add('partition: activity completed → closed', closed - nth(EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED));
  hops.add('partition: started → closed', closed - start);
}

/** Which activity a local activity's marker records (its details' `data`, JSON), if the event is one. */
function localActivityType(e: HistoryEvent): string | undefined {
  const marker = e.markerRecordedEventAttributes;
  if (marker?.markerName !== 'core_local_activity') return undefined;
  const data = marker.details?.data?.payloads?.[0]?.data;
  return data ? (JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string }).activity_type : undefined;
}

/** A group's members that finished in their local attempt, and those that went on to their activity (a missed local start, a handover). */
function groupMembers(events: HistoryEvent[]): { local: number; activities: number } {
  const locals = events.filter((e) => localActivityType(e) === 'processPartition').length;
  const activities = events.filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED).length;
  return { local: locals - activities, activities };
}

async function round(env: BenchEnvironment, dir: string, n: number): Promise<string[]> {
  await env.pool.query('TRUNCATE bench_small.tiny_out');
  const name = `hops-${Date.now()}-${n}`;
  const file = path.join(dir, `${name}.yaml`);
  writeFileSync(file, stringify({ name, reason: 'benchmark', database: 'BENCH_DATABASE_URL', ...tinySpec(CONCURRENCY) }));
  const t0 = Date.now();
  const started = await startRun({ client: env.client, taskQueue: 'bench' }, { specFile: file, actor: 'bench' });
  await waitForResult(started.handle);
  const wall = Date.now() - t0;
  const hops = new Hops();
  const workflowId = started.handle.workflowId;
  const events = await historyEvents(env.client, workflowId);
  const tasks = runHops(events, hops);
  const signals = reportSignals(events).map(at);
  const members = { groups: 0, local: 0, activities: 0 };
  for (const id of await partitionWorkflowIds(env.client, workflowId, events)) {
    const partition = await historyEvents(env.client, id);
    partitionHops(partition, hops);
    if (id.includes('/group/')) {
      const counted = groupMembers(partition);
      members.groups++;
      members.local += counted.local;
      members.activities += counted.activities;
    }
    // a partition in a freed slot: the report that freed it → its workflow started (the run's task and local activity)
    const { started: startedAt } = partitionTimes(partition);
    const freedBy = signals.filter((t) => t <= startedAt).pop();
    if (freedBy !== undefined) hops.add('run: a report → the next partition started', startedAt - freedBy);
  }
  const slot = (wall * CONCURRENCY) / PARTITIONS;
  say(`  round ${n}: ${wall} ms, slot ${slot.toFixed(0)} ms a partition`);
  return [
    `Round ${n}: ${(wall / 1000).toFixed(2)} s, slot time ${slot.toFixed(0)} ms a partition, the run's history ${events.length} events in ${tasks} workflow tasks.`,
    ...(members.groups > 0
      ? [`${members.groups} groups: ${members.local} members finished in their local attempt, ${members.activities} went on to their activity.`]
      : []),
    '',
    '| hop (ms) | mean | median | slowest | samples |',
    '|---|---|---|---|---|',
    ...hops.rows(),
    '',
  ];
}

async function main(): Promise<void> {
  const env = await startBenchEnvironment({ server: SERVER, dataset: false, asDemo: true, workerActivities: 20 });
  try {
    await createTinyTable(env.pool, PARTITIONS);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'backfill-bench-hops-'));
    const lines: string[] = [];
    for (let n = 1; n <= ROUNDS; n++) lines.push(...(await round(env, dir, n)));
    const server = SERVER === 'production' ? 'the production server' : 'the dev server as `demo` starts it';
    process.stdout.write(
      `\n${PARTITIONS} one-row partitions at concurrency ${CONCURRENCY} on ${server}, PostgreSQL ${env.version}, ${os.cpus().length} cores, ${new Date().toISOString()}\n\n${lines.join('\n')}`,
    );
  } finally {
    await env.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
