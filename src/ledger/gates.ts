/**
 * backfill.gate_results: what each gate found, per partition where it failed and once per
 * gate in sum. Written by the canary and final checks (workers) and `backfill verify`; read by
 * finalizeRun (a failed final gate fails the run), status and the report.
 */
import type pg from 'pg';

type Queryable = pg.Pool | pg.PoolClient;

export type GateStage = 'canary' | 'ramp' | 'final' | 'verify';

export interface GateResult {
  runId: string;
  attempt: number;
  stage: GateStage;
  /** `compare`, `invariant:<name>`, `partitions` (the canary's partitions finished). */
  gate: string;
  /** NULL: the gate's sum over every partition checked. */
  partitionId: string | null;
  passed: boolean;
  rowsChecked: number;
  violations: number;
  examples?: string;
  durationMs: number;
}

export interface GateRow {
  stage: GateStage;
  gate: string;
  partition_id: string | null;
  passed: boolean;
  rows_checked: string;
  violations: string;
  examples: string | null;
  checked_at: Date;
  attempt: number;
}

export async function recordGate(db: Queryable, r: GateResult): Promise<void> {
  await db.query(
    `INSERT INTO backfill.gate_results (run_id, attempt, stage, gate, partition_id, passed, rows_checked, violations, examples, duration_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (run_id, attempt, stage, gate, (coalesce(partition_id, '')))
     DO UPDATE SET passed = EXCLUDED.passed, rows_checked = EXCLUDED.rows_checked, violations = EXCLUDED.violations,
                   examples = EXCLUDED.examples, duration_ms = EXCLUDED.duration_ms, checked_at = now()`,
    [r.runId, r.attempt, r.stage, r.gate, r.partitionId, r.passed, r.rowsChecked, r.violations, r.examples ?? null, Math.round(r.durationMs)],
  );
}

export async function gateResults(db: Queryable, runId: string, stage?: GateStage): Promise<GateRow[]> {
  const { rows } = await db.query<GateRow>(
    `SELECT stage, gate, partition_id, passed, rows_checked::text, violations::text, examples, checked_at, attempt
       FROM backfill.gate_results WHERE run_id = $1 AND ($2::text IS NULL OR stage = $2)
      ORDER BY attempt, stage, gate, partition_id NULLS FIRST`,
    [runId, stage ?? null],
  );
  return rows;
}

/** The newest attempt's failed gates at one stage. */
export async function failedGates(db: Queryable, runId: string, attempt: number, stage: GateStage): Promise<GateRow[]> {
  const rows = await gateResults(db, runId, stage);
  return rows.filter((r) => r.attempt === attempt && !r.passed);
}
