/**
 * Where a demo run's seconds go, from outside and from Temporal: the demo spec run on a dev
 * server started as `demo` starts it (one in-process worker), `start` timed by its steps, then
 * the run workflow's history: when it registered, when its first partition started, when its
 * last partition reported, when it finished — beside the ledger's timeline
 * (bench/run-timeline.ts). It is the attribution behind the demo's ratio in bench/RESULTS.md.
 * Run: npm run bench:demo-trace   (DATABASE_URL to use a server; BENCH_ROUNDS (3); BENCH_TRACE_TAIL=N prints
 * the run history's last N events with their times)
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { parse } from 'yaml';
import { ensureDemoData } from '../src/dev/demo-data';
import { say, startBenchEnvironment } from './harness';

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const EventType = temporal.api.enums.v1.EventType;

async function main(): Promise<void> {
  const env = await startBenchEnvironment({ dataset: false, asDemo: true, workerActivities: 20 });
  try {
    await ensureDemoData(env.pool, say);
    const {
      name: _n,
      reason: _r,
      database: _d,
      ...body
    } = parse(readFileSync(path.join(__dirname, '..', 'examples', 'orders-usd.yaml'), 'utf8')) as Record<string, unknown>;
    const lines: string[] = [];
    const activities: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      await env.pool.query('TRUNCATE demo.orders_usd');
      await env.pool.query('VACUUM ANALYZE demo.orders_usd');
      const t0 = Date.now();
      const result = await env.backfill(`trace-${Date.now()}`, body);
      const total = Date.now() - t0;
      const history = await env.client.workflow.getHandle(result.workflowId, result.firstRunId).fetchHistory();
      const at = (e: temporal.api.history.v1.IHistoryEvent) => Number(e.eventTime!.seconds) * 1000 + Math.round((e.eventTime!.nanos ?? 0) / 1e6) - t0;
      const events = history.events ?? [];
      const first = (type: number) => events.find((e) => e.eventType === type);
      const last = (type: number) => [...events].reverse().find((e) => e.eventType === type);
      const started = first(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)!;
      const firstChild = first(EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED);
      const lastSignal = last(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
      const closed = events[events.length - 1];
      const registered = await env.pool.query<{ ms: number }>('SELECT extract(epoch FROM created_at) * 1000 AS ms FROM backfill.runs WHERE run_id = $1', [
        result.runId,
      ]);
      const row = [
        round,
        total,
        at(started),
        Math.round(Number(registered.rows[0].ms) - t0),
        firstChild ? at(firstChild) : NaN,
        lastSignal ? at(lastSignal) : NaN,
        at(closed),
        events.length,
      ];
      say(`  round ${round}: ${row.join(' / ')}`);
      // the run's own activities, each from its scheduling to its completion
      const scheduled = new Map<string, { type: string; at: number }>();
      for (const e of events) {
        if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
          scheduled.set(String(e.eventId), { type: e.activityTaskScheduledEventAttributes!.activityType!.name!, at: at(e) });
        } else if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
          const s = scheduled.get(String(e.activityTaskCompletedEventAttributes!.scheduledEventId));
          if (s) activities.push(`${s.type} ${s.at}→${at(e)}`);
        }
      }
      say(`    ${activities.splice(0).join(', ')}`);
      if (process.env.BENCH_TRACE_TAIL) {
        for (const e of events.slice(-Number(process.env.BENCH_TRACE_TAIL))) say(`      ${at(e)} ${EventType[e.eventType!]}`);
      }
      lines.push(`| ${row.join(' | ')} |`);
    }
    process.stdout.write(
      '\n| round | total ms | workflow started | registered (ledger) | first partition started | last report | run closed | run history events |\n|---|---|---|---|---|---|---|---|\n' +
        lines.join('\n') +
        '\n',
    );
  } finally {
    await env.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
