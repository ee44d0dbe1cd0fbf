/**
 * backfill.run_events: the append-only audit trail of a run — who started, paused,
 * resumed or cancelled it and why, and what the engine decided. An event_key makes a
 * retried writer record its event once.
 */
import type pg from 'pg';

type Queryable = pg.Pool | pg.PoolClient;

export interface RunEvent {
  runId: string;
  kind: string;
  actor?: string;
  reason?: string;
  detail?: Record<string, unknown>;
  /** Idempotency key: the same key is recorded once per run. */
  key?: string;
}

export interface RunEventRow {
  id: string;
  run_id: string;
  at: Date;
  kind: string;
  actor: string | null;
  reason: string | null;
  detail: Record<string, unknown> | null;
}

export async function recordEvent(db: Queryable, event: RunEvent): Promise<void> {
  await db.query(
    `INSERT INTO backfill.run_events (run_id, event_key, kind, actor, reason, detail)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (run_id, event_key) DO NOTHING`,
    [event.runId, event.key ?? null, event.kind, event.actor ?? null, event.reason ?? null, event.detail ? JSON.stringify(event.detail) : null],
  );
}

export async function listEvents(db: Queryable, runId: string, limit = 20): Promise<RunEventRow[]> {
  const { rows } = await db.query<RunEventRow>('SELECT * FROM (SELECT * FROM backfill.run_events WHERE run_id = $1 ORDER BY id DESC LIMIT $2) e ORDER BY id', [
    runId,
    limit,
  ]);
  return rows;
}

/** Every event of the run, oldest first (the report). */
export async function allEvents(db: Queryable, runId: string): Promise<RunEventRow[]> {
  const { rows } = await db.query<RunEventRow>('SELECT * FROM backfill.run_events WHERE run_id = $1 ORDER BY id', [runId]);
  return rows;
}

/** The newest gate decision or operator answer to one: a canary or stage verdict, an approval, a resume. */
export async function lastGateDecision(db: Queryable, runId: string): Promise<{ kind: string; reason: string | null } | undefined> {
  const { rows } = await db.query<{ kind: string; reason: string | null }>(
    `SELECT kind, reason FROM backfill.run_events WHERE run_id = $1 AND kind IN ('canary-failed', 'canary-passed', 'stage-failed', 'stage-passed', 'approved', 'resumed') ORDER BY id DESC LIMIT 1`,
    [runId],
  );
  return rows[0];
}
