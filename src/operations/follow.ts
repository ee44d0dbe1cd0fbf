/**
 * Following a run from its ledger, once per interval, until it ends: each snapshot holds
 * the run row, its totals, the partitions that failed and those in flight, and the read
 * rate over the last ten seconds. Renderers (`watch`, `start --wait`, the demo) decide
 * what to show; this decides what is true. Resolves with the run's final status.
 */
import type pg from 'pg';
import { isDatabaseUnavailable } from '../db/errors';
import { listPartitions, runTotals, type PartitionRow, type RunTotals } from '../ledger/partitions';
import { getRun, type RunRow } from '../ledger/runs';
import { lastGateDecision } from '../ledger/events';
import { ACTIVE_RUN_STATUSES, type RunStatus } from '../domain/statuses';

export interface RunSnapshot {
  run: RunRow;
  totals: RunTotals;
  /** Partitions that have finished, in any status. */
  done: number;
  failed: PartitionRow[];
  running: PartitionRow[];
  /** Source rows read per second over the last ten seconds. */
  rowsPerSecond: number;
  /** False once the run has ended: this is the last snapshot. */
  active: boolean;
  /** Set while a gate (the canary, a ramp stage) holds the run: why, and what to do. */
  canaryHold?: string;
}

export interface FollowOptions {
  intervalMs?: number;
  /** At most this many running partitions per snapshot. */
  runningLimit?: number;
  /**
   * Follow through a database outage (a restart, a failover, a lost connection) for this long
   * before giving up (default 10 minutes): what the workers ride out, the follower rides out too.
   */
  outageMs?: number;
  /** Told when the database is away and when it is back. */
  onOutage?: (message: string | null) => void;
}

export async function followRun(pool: pg.Pool, runId: string, onSnapshot: (snapshot: RunSnapshot) => void, options: FollowOptions = {}): Promise<RunStatus> {
  const interval = options.intervalMs ?? 1000;
  let samples: { t: number; rows: number }[] = [];
  let awaySince: number | undefined;
  for (;;) {
    let status: RunStatus | undefined;
    try {
      status = await snapshot();
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      awaySince ??= Date.now();
      if (Date.now() - awaySince > (options.outageMs ?? 10 * 60_000)) {
        throw new Error(
          `the database has been unavailable for ${Math.round((Date.now() - awaySince) / 1000)} s (${(err as Error).message}); the run goes on without this follower: backfill watch ${runId}`,
        );
      }
      options.onOutage?.(`database unavailable (${(err as Error).message}); still following`);
      await new Promise((resolve) => setTimeout(resolve, interval));
      continue;
    }
    if (awaySince !== undefined) {
      awaySince = undefined;
      options.onOutage?.(null);
    }
    if (status) return status;
    await new Promise((resolve) => setTimeout(resolve, interval));
  }

  /** One snapshot; the run's final status once it has ended. */
  async function snapshot(): Promise<RunStatus | undefined> {
    const run = await getRun(pool, runId);
    if (!run) throw new Error(`run ${runId} is not in the ledger`);
    const totals = await runTotals(pool, runId);
    const now = Date.now();
    samples = [...samples.filter((s) => now - s.t <= 10_000), { t: now, rows: totals.rowsRead }];
    const first = samples[0];
    const active = ACTIVE_RUN_STATUSES.includes(run.status);
    onSnapshot({
      run,
      totals,
      done: totals.byStatus.succeeded + totals.byStatus.failed + totals.byStatus.cancelled,
      failed: await listPartitions(pool, runId, { status: ['failed'] }),
      running: await listPartitions(pool, runId, { status: ['running'], limit: options.runningLimit ?? 1000 }),
      rowsPerSecond: now > first.t ? Math.round(((totals.rowsRead - first.rows) * 1000) / (now - first.t)) : 0,
      active,
      canaryHold: run.paused && active ? await canaryHold(pool, runId) : undefined,
    });
    return active ? undefined : run.status;
  }
}

/** The run is held by a gate (its canary, a ramp stage) when the newest gate decision is a hold nobody approved since. */
export async function canaryHold(pool: pg.Pool, runId: string): Promise<string | undefined> {
  const last = await lastGateDecision(pool, runId);
  return last && ['canary-failed', 'canary-passed', 'stage-failed'].includes(last.kind) && last.reason ? last.reason : undefined;
}
