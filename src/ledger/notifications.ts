/**
 * backfill.notifications (migration 18): each moment of a run and each target it goes to, and
 * how delivering it went. Written by the notifier's activities; read by `status` and the report.
 */
import type pg from 'pg';

type Queryable = pg.Pool | pg.PoolClient;

export type DeliveryStatus = 'pending' | 'delivered' | 'failing' | 'refused';

export interface NotificationRow {
  event_key: string;
  kind: string;
  target: string;
  status: DeliveryStatus;
  attempts: number;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

/** The outcome of one attempt; a delivered moment stays delivered (a late retry changes nothing). */
export async function recordDelivery(
  db: Queryable,
  d: { runId: string; eventKey: string; kind: string; target: string; status: DeliveryStatus; error?: string },
): Promise<void> {
  await db.query(
    `INSERT INTO backfill.notifications (run_id, event_key, kind, target, status, attempts, last_error, delivered_at)
     VALUES ($1, $2, $3, $4, $5, 1, $6, CASE WHEN $5 = 'delivered' THEN now() END)
     ON CONFLICT (run_id, event_key, target) DO UPDATE
       SET status = CASE WHEN backfill.notifications.status = 'delivered' THEN 'delivered' ELSE EXCLUDED.status END,
           attempts = backfill.notifications.attempts + 1,
           last_error = coalesce(EXCLUDED.last_error, backfill.notifications.last_error),
           delivered_at = coalesce(backfill.notifications.delivered_at, EXCLUDED.delivered_at)`,
    [d.runId, d.eventKey, d.kind, d.target, d.status, d.error ?? null],
  );
}

/** Whether this moment already reached this target (a retried delivery after a lost answer). */
export async function wasDelivered(db: Queryable, runId: string, eventKey: string, target: string): Promise<boolean> {
  const { rows } = await db.query("SELECT 1 FROM backfill.notifications WHERE run_id = $1 AND event_key = $2 AND target = $3 AND status = 'delivered'", [
    runId,
    eventKey,
    target,
  ]);
  return rows.length > 0;
}

export async function listNotifications(db: Queryable, runId: string): Promise<NotificationRow[]> {
  const exists = await db.query<{ t: string | null }>("SELECT to_regclass('backfill.notifications')::text AS t");
  if (exists.rows[0].t === null) return [];
  const { rows } = await db.query<NotificationRow>(
    'SELECT event_key, kind, target, status, attempts, last_error, created_at, delivered_at FROM backfill.notifications WHERE run_id = $1 ORDER BY created_at, target',
    [runId],
  );
  return rows;
}

/** What the notifier reads each look: the run's status, its new events, failed partitions, and partitions held now with why. */
export interface RunMoments {
  status: string;
  attempt: number;
  /** A revert run: the run it undoes. */
  reverts: string | null;
  events: { seq: string; key: string | null; kind: string; actor: string | null; reason: string | null; detail: Record<string, unknown> | null }[];
  failed: { partitionId: string; error: string | null; range: string | null; attempt: number }[];
  held: { partitionId: string; reason: string }[];
}

export async function runMoments(db: Queryable, runId: string, afterSeq: string): Promise<RunMoments> {
  const run = await db.query<{ status: string; attempt: number; reverts: string | null }>(
    'SELECT status, attempt, reverts FROM backfill.runs WHERE run_id = $1',
    [runId],
  );
  const events = await db.query<RunMoments['events'][number]>(
    'SELECT id::text AS seq, event_key AS key, kind, actor, reason, detail FROM backfill.run_events WHERE run_id = $1 AND id > $2::bigint ORDER BY id',
    [runId, afterSeq],
  );
  const parts = await db.query<{
    partition_id: string;
    status: string;
    last_error: string | null;
    error_range: string | null;
    hold_reason: string | null;
    run_attempt: number;
  }>(
    "SELECT partition_id, status, last_error, error_range, hold_reason, run_attempt FROM backfill.partitions WHERE run_id = $1 AND (status = 'failed' OR (status = 'running' AND hold_reason IS NOT NULL))",
    [runId],
  );
  return {
    status: run.rows[0]?.status ?? 'unknown',
    attempt: run.rows[0]?.attempt ?? 1,
    reverts: run.rows[0]?.reverts ?? null,
    events: events.rows,
    failed: parts.rows
      .filter((p) => p.status === 'failed')
      .map((p) => ({ partitionId: p.partition_id, error: p.last_error, range: p.error_range, attempt: p.run_attempt })),
    held: parts.rows.filter((p) => p.status === 'running').map((p) => ({ partitionId: p.partition_id, reason: p.hold_reason! })),
  };
}
