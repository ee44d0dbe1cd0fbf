/**
 * A run's lifecycle as a typed stream of events, read from its ledger: what `watch` shows, for
 * programs. Every event names its run; `progress` comes once per interval, the others when
 * something changed, and `ended` is the last. Built on operations/follow.ts, so a database
 * outage is ridden out as `watch` rides it out.
 */
import type pg from 'pg';
import type { RunSnapshot } from '../operations/follow';
import { followRun } from '../operations/follow';
import type { RunStatus } from '../domain/statuses';

export type RunEvent =
  /** The ledger's counts, once per interval while the run is active (and once at its end). */
  | {
      type: 'progress';
      runId: string;
      status: RunStatus;
      paused: boolean;
      partitions: { total: number; done: number; running: number; failed: number };
      rowsRead: number;
      rowsWritten: number;
      /** Source rows read per second over the last ten seconds. */
      rowsPerSecond: number;
    }
  /** The run's status changed (the first event says what it is when the stream starts: `from` null). */
  | { type: 'status'; runId: string; from: RunStatus | null; to: RunStatus }
  /** A partition failed; `error` is its message, without row data. */
  | { type: 'partition-failed'; runId: string; partitionId: string; error: string | null }
  /** A gate (the canary, a ramp stage) holds the run for a person: why, and what to do. */
  | { type: 'held'; runId: string; reason: string }
  /** The database was unreachable (`reason`), or is back (`reason` null); the stream goes on. */
  | { type: 'database'; runId: string; reason: string | null }
  /** The run has ended: the last event. */
  | { type: 'ended'; runId: string; status: RunStatus };

export interface RunEventOptions {
  /** How often the ledger is read (default 1 s). */
  intervalMs?: number;
}

/** Events of `runId` until it ends; stopping the iteration early stops reading the ledger. */
export async function* runEvents(pool: pg.Pool, runId: string, options: RunEventOptions = {}): AsyncGenerator<RunEvent> {
  const queue: RunEvent[] = [];
  let wake: (() => void) | undefined;
  let stopped = false;
  let failure: unknown;
  let finished = false;
  const changes = new EventsOfSnapshots(runId);
  const push = (events: RunEvent[]) => {
    queue.push(...events);
    wake?.();
  };
  const following = followRun(
    pool,
    runId,
    (snapshot) => {
      if (stopped) throw new StopFollowing();
      push(changes.of(snapshot));
    },
    { intervalMs: options.intervalMs, onOutage: (reason) => push([{ type: 'database', runId, reason }]) },
  ).then(
    (status) => push([{ type: 'ended', runId, status }]),
    (err) => {
      if (!(err instanceof StopFollowing)) failure = err;
    },
  );
  void following.finally(() => {
    finished = true;
    wake?.();
  });
  try {
    for (;;) {
      const next = queue.shift();
      if (next) {
        yield next;
        if (next.type === 'ended') return;
        continue;
      }
      if (failure) throw failure;
      if (finished) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    stopped = true;
  }
}

class StopFollowing extends Error {}

/** Turns each snapshot into the events it holds: what changed since the one before, then progress. */
class EventsOfSnapshots {
  private status: RunStatus | null = null;
  private readonly failed = new Set<string>();
  private held: string | undefined;

  constructor(private readonly runId: string) {}

  of(s: RunSnapshot): RunEvent[] {
    const runId = this.runId;
    const events: RunEvent[] = [];
    if (s.run.status !== this.status) {
      events.push({ type: 'status', runId, from: this.status, to: s.run.status });
      this.status = s.run.status;
    }
    for (const p of s.failed) {
      if (this.failed.has(p.partition_id)) continue;
      this.failed.add(p.partition_id);
      events.push({ type: 'partition-failed', runId, partitionId: p.partition_id, error: p.last_error });
    }
    if (s.canaryHold && s.canaryHold !== this.held) events.push({ type: 'held', runId, reason: s.canaryHold });
    this.held = s.canaryHold;
    events.push({
      type: 'progress',
      runId,
      status: s.run.status,
      paused: s.run.paused,
      partitions: { total: s.totals.total, done: s.done, running: s.totals.byStatus.running, failed: s.totals.byStatus.failed },
      rowsRead: s.totals.rowsRead,
      rowsWritten: s.totals.rowsWritten,
      rowsPerSecond: s.rowsPerSecond,
    });
    return events;
  }
}
