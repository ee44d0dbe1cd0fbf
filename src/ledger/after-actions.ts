/**
 * backfill.after_actions: one row per after-action of a run (its place in the spec's `after`
 * list), with its outcome, tries and times; src/after-actions/run-actions.ts runs them and
 * records each try here, so `backfill after <run>` knows what already succeeded.
 */
import type pg from 'pg';

type Queryable = pg.Pool | pg.PoolClient;

export interface AfterActionRow {
  position: number;
  action: string;
  description: string;
  status: 'pending' | 'succeeded' | 'failed';
  tries: number;
  last_error: string | null;
  started_at: Date | null;
  finished_at: Date | null;
}

export async function listAfterActions(db: Queryable, runId: string): Promise<AfterActionRow[]> {
  const { rows } = await db.query<AfterActionRow>(
    'SELECT position, action, description, status, tries, last_error, started_at, finished_at FROM backfill.after_actions WHERE run_id = $1 ORDER BY position',
    [runId],
  );
  return rows;
}

/** Records the run's actions as pending; actions recorded before (a second `after`) keep their outcome. */
export async function planAfterActions(db: Queryable, runId: string, actions: { action: string; description: string }[]): Promise<void> {
  for (const [position, a] of actions.entries()) {
    await db.query(
      `INSERT INTO backfill.after_actions (run_id, position, action, description, status) VALUES ($1, $2, $3, $4, 'pending') ON CONFLICT DO NOTHING`,
      [runId, position, a.action, a.description],
    );
  }
}

export async function recordAfterActionTry(db: Queryable, runId: string, position: number): Promise<void> {
  await db.query('UPDATE backfill.after_actions SET tries = tries + 1, started_at = coalesce(started_at, now()) WHERE run_id = $1 AND position = $2', [
    runId,
    position,
  ]);
}

export async function recordAfterActionSucceeded(db: Queryable, runId: string, position: number): Promise<void> {
  await db.query("UPDATE backfill.after_actions SET status = 'succeeded', last_error = NULL, finished_at = now() WHERE run_id = $1 AND position = $2", [
    runId,
    position,
  ]);
}

/** A failed try: `final` when no try is left (the action is then failed), else it stays pending. */
export async function recordAfterActionFailure(db: Queryable, runId: string, position: number, final: boolean, message: string): Promise<void> {
  await db.query(
    `UPDATE backfill.after_actions SET status = $3, last_error = $4, finished_at = CASE WHEN $3 = 'failed' THEN now() END WHERE run_id = $1 AND position = $2`,
    [runId, position, final ? 'failed' : 'pending', message],
  );
}
