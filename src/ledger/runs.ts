/**
 * backfill.runs: one row per run, kept for good. Holds the frozen spec and transform,
 * the run's status, and the control flags (paused, cancel_requested, limits) that
 * running activities read before every chunk (run-control.ts). Status changes follow
 * RUN_TRANSITIONS; a finished run's next attempt and an abandoned run's close are
 * run-attempts.ts.
 */
import type pg from 'pg';
import { quoteTable } from '../db/sql';
import { ACTIVE_RUN_STATUSES, allowedFrom, FINISHED_RUN_STATUSES, RUN_TRANSITIONS, type RunStatus } from '../domain/statuses';
import type { Limits } from '../domain/types';
import type { RunIdHolder } from '../domain/labels';
import type { FrozenTransform } from '../specs/load';
import type { Spec } from '../specs/schema';
import type { RunShape } from '../compiler/shape';
import type { InputFingerprint } from '../preflight/input-fingerprints';
import type { SavedPlan } from '../preflight/saved-plan';
import type { RunSubset } from '../compiler/subset';

export type Queryable = pg.Pool | pg.PoolClient;

export interface RunRow {
  run_id: string;
  /** Resolved target table (migration 0007); NULL for runs registered before it. */
  target_relation: string | null;
  /** The database the run was planned against (src/db/identity.ts); NULL for runs registered before it. */
  database_identity: string | null;
  /** Rows in scope at the end of the run that no planned partition covered; NULL when not measured. */
  rows_outside_plan: string | null;
  /** After-actions: NULL when the spec has none or they have not run (migration 0008). */
  downstream: 'pending' | 'succeeded' | 'failed' | 'skipped' | null;
  name: string;
  workflow_id: string;
  reason: string;
  status: RunStatus;
  spec: Spec;
  spec_file: string | null;
  spec_hash: string;
  transform_name: string;
  transform_version: number;
  transform_kind: 'sql' | 'module';
  transform_hash: string;
  module_path: string | null;
  database_var: string;
  limits: Limits;
  shape: RunShape;
  paused: boolean;
  cancel_requested: boolean;
  control_version: string;
  partitions_total: number;
  attempt: number;
  started_by: string;
  last_error: string | null;
  /** The tables and functions a SQL transform reads, as accepted (migration 0010); NULL for module transforms and older runs. */
  input_fingerprints: InputFingerprint[] | null;
  server_version: string | null;
  engine_version: string | null;
  /** The saved plan the run was started from (`start --plan`), and who approved it. */
  approved_plan: SavedPlan | null;
  approved_by: string | null;
  only_stale: boolean;
  /** Rows in scope at registration (bigint as text); NULL for runs registered before migration 0010. */
  rows_planned: string | null;
  rows_planned_exact: boolean | null;
  /** The run's before-images table (ledger/before-images.ts); NULL with `undo: off` and for runs registered before migration 0014. */
  undo_table: string | null;
  /** How long its images are kept after the run finishes, as the spec said it (`14 days`). */
  undo_keep: string | null;
  /** A revert run: the run it undoes (migration 0015); NULL for every other run. */
  reverts: string | null;
  /** A run of part of the plan on purpose (migration 0017); NULL for a run of the whole plan. */
  subset: RunSubset | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export interface NewRun {
  runId: string;
  name: string;
  workflowId: string;
  reason: string;
  spec: Spec;
  specFile?: string;
  specHash: string;
  transform: FrozenTransform;
  databaseVar: string;
  limits: Limits;
  shape: RunShape;
  partitionsTotal: number;
  startedBy: string;
  /** The target as the database names it; one active run per target. */
  targetRelation: string;
  databaseIdentity?: string;
  inputFingerprints?: InputFingerprint[];
  serverVersion?: string;
  engineVersion?: string;
  approvedPlan?: SavedPlan;
  approvedBy?: string;
  onlyStale?: boolean;
  rowsPlanned?: { rows: number; exact: boolean };
  /** Where its before-images go and how long they are kept; absent with `undo: off`. */
  undo?: { table: string; keep: string };
  /** A revert run: the run it undoes. */
  reverts?: string;
  /** A run of part of the plan on purpose. */
  subset?: RunSubset;
}

/** The transform a run froze, as recorded in its row (the inverse of what insertRun stores). */
export function frozenTransformOf(run: RunRow): FrozenTransform {
  return {
    name: run.transform_name,
    version: run.transform_version,
    kind: run.transform_kind,
    codeHash: run.transform_hash,
    ...(run.module_path ? { modulePath: run.module_path } : {}),
  };
}

/** Inserts the run; returns false if a run with this id already exists (a retried registration). */
export async function insertRun(db: Queryable, run: NewRun): Promise<boolean> {
  const res = await db.query(
    `INSERT INTO backfill.runs (run_id, name, workflow_id, reason, status, spec, spec_file, spec_hash,
       transform_name, transform_version, transform_kind, transform_hash, module_path, database_var, limits,
       shape, partitions_total, started_by, target_relation, database_identity,
       input_fingerprints, server_version, engine_version, approved_plan, approved_by, only_stale, rows_planned, rows_planned_exact,
       undo_table, undo_keep, reverts, subset)
     VALUES ($1,$2,$3,$4,'pending',$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28,$29,$30,$31)
     ON CONFLICT (run_id) DO NOTHING`,
    [
      run.runId,
      run.name,
      run.workflowId,
      run.reason,
      JSON.stringify(run.spec),
      run.specFile ?? null,
      run.specHash,
      run.transform.name,
      run.transform.version,
      run.transform.kind,
      run.transform.codeHash,
      run.transform.modulePath ?? null,
      run.databaseVar,
      JSON.stringify(run.limits),
      JSON.stringify(run.shape),
      run.partitionsTotal,
      run.startedBy,
      run.targetRelation,
      run.databaseIdentity ?? null,
      run.inputFingerprints ? JSON.stringify(run.inputFingerprints) : null,
      run.serverVersion ?? null,
      run.engineVersion ?? null,
      run.approvedPlan ? JSON.stringify(run.approvedPlan) : null,
      run.approvedBy ?? null,
      run.onlyStale === true,
      run.rowsPlanned?.rows ?? null,
      run.rowsPlanned?.exact ?? null,
      run.undo?.table ?? null,
      run.undo?.keep ?? null,
      run.reverts ?? null,
      run.subset ? JSON.stringify(run.subset) : null,
    ],
  );
  return res.rowCount === 1;
}

/** False until the first run registered in this database created the ledger. */
export async function ledgerExists(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ t: string | null }>("SELECT to_regclass('backfill.runs')::text AS t");
  return rows[0].t !== null;
}

export async function getRun(db: Queryable, runId: string): Promise<RunRow | undefined> {
  const { rows } = await db.query<RunRow>('SELECT * FROM backfill.runs WHERE run_id = $1', [runId]);
  return rows[0];
}

/** What an operator needs to know about the run holding an id (see runIdTakenMessage). */
export function holderFacts(run: RunRow): RunIdHolder {
  return { name: run.name, workflowId: run.workflow_id, status: run.status, startedBy: run.started_by, createdAt: run.created_at, specHash: run.spec_hash };
}

export async function findActiveRun(db: Queryable, name: string): Promise<RunRow | undefined> {
  const { rows } = await db.query<RunRow>('SELECT * FROM backfill.runs WHERE name = $1 AND status = ANY($2)', [name, ACTIVE_RUN_STATUSES]);
  return rows[0];
}

/** A table as the database names it (`app.orders_usd`), so two spellings of one table compare equal. */
export async function resolveRelation(db: Queryable, table: string): Promise<string | undefined> {
  const { rows } = await db.query<{ name: string | null }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)`,
    [quoteTable(table)],
  );
  return rows[0]?.name ?? undefined;
}

export async function findActiveRunOnTarget(db: Queryable, targetRelation: string): Promise<RunRow | undefined> {
  try {
    const { rows } = await db.query<RunRow>('SELECT * FROM backfill.runs WHERE target_relation = $1 AND status = ANY($2)', [
      targetRelation,
      ACTIVE_RUN_STATUSES,
    ]);
    return rows[0];
  } catch (err) {
    // a ledger from before migration 0007 (the CLI looks before a worker has migrated it): no run records its target yet
    if ((err as { code?: string }).code === '42703') return undefined;
    throw err;
  }
}

export async function listRuns(db: Queryable, filter: { name?: string; status?: string; limit?: number } = {}): Promise<RunRow[]> {
  const { rows } = await db.query<RunRow>(
    `SELECT * FROM backfill.runs WHERE ($1::text IS NULL OR name = $1) AND ($2::text IS NULL OR status = $2)
      ORDER BY created_at DESC LIMIT $3`,
    [filter.name ?? null, filter.status ?? null, filter.limit ?? 50],
  );
  return rows;
}

/**
 * Moves a run to `to` if the transition is allowed from its current status; a repeat of
 * the same move is a no-op, so retried activities may call it freely. Returns the status after.
 */
export async function transitionRun(db: Queryable, runId: string, to: RunStatus, lastError?: string): Promise<RunStatus> {
  const from = allowedFrom(RUN_TRANSITIONS, to);
  const terminal = FINISHED_RUN_STATUSES.includes(to);
  const { rows } = await db.query<{ status: RunStatus }>(
    `UPDATE backfill.runs SET status = $2, updated_at = now(),
        started_at = CASE WHEN $2 = 'running' THEN coalesce(started_at, now()) ELSE started_at END,
        finished_at = CASE WHEN $4 THEN now() ELSE finished_at END,
        last_error = coalesce($5, last_error)
      WHERE run_id = $1 AND status = ANY($3) RETURNING status`,
    [runId, to, from, terminal, lastError ?? null],
  );
  if (rows[0]) return rows[0].status;
  const current = await getRun(db, runId);
  if (!current) throw new Error(`run ${runId} is not in the ledger`);
  return current.status;
}

/** Rows in scope that no planned partition covered, counted at the run's end. */
export async function setRowsOutsidePlan(db: Queryable, runId: string, rows: number): Promise<void> {
  await db.query('UPDATE backfill.runs SET rows_outside_plan = $2 WHERE run_id = $1', [runId, rows]);
}

/** Where the run's after-actions stand (see ledger/after-actions.ts). */
export async function setDownstream(db: Queryable, runId: string, downstream: 'pending' | 'succeeded' | 'failed'): Promise<void> {
  await db.query('UPDATE backfill.runs SET downstream = $2 WHERE run_id = $1', [runId, downstream]);
}

/** The run's temporary state is gone; the first time is kept. */
export async function markCleaned(db: Queryable, runId: string): Promise<void> {
  await db.query('UPDATE backfill.runs SET cleaned_at = coalesce(cleaned_at, now()) WHERE run_id = $1', [runId]);
}

/** The SQL transform's inputs as last accepted: read fresh, since an operator may accept a change while the run goes on. */
export async function acceptedInputs(db: Queryable, runId: string): Promise<InputFingerprint[]> {
  const { rows } = await db.query<{ input_fingerprints: InputFingerprint[] | null }>('SELECT input_fingerprints FROM backfill.runs WHERE run_id = $1', [runId]);
  return rows[0]?.input_fingerprints ?? [];
}

export async function acceptInputs(db: Queryable, runId: string, fingerprints: InputFingerprint[]): Promise<void> {
  await db.query('UPDATE backfill.runs SET input_fingerprints = $2 WHERE run_id = $1', [runId, JSON.stringify(fingerprints)]);
}

/** The rows the run's plan counted or estimated (rows_planned), if it recorded them. */
export async function plannedRows(db: Queryable, runId: string): Promise<number | undefined> {
  const { rows } = await db.query<{ rows_planned: string | null }>('SELECT rows_planned FROM backfill.runs WHERE run_id = $1', [runId]);
  return rows[0]?.rows_planned == null ? undefined : Number(rows[0].rows_planned);
}
