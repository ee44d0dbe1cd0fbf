/**
 * A run's state from the ledger alone, so it works after Temporal's retention has dropped
 * the history: partitions by status, rows, failures with their key ranges, why running
 * partitions wait, and the last control events. `backfill status` and `list` render these.
 */
import { partitionsComputedBeforeInputChange } from '../ledger/stale';
import type pg from 'pg';
import type { WorkerGap } from './database-workers';
import { listAfterActions } from '../ledger/after-actions';
import { listEvents, type RunEventRow } from '../ledger/events';
import { canaryHold } from './follow';
import { gateResults } from '../ledger/gates';
import { chunkWriters, recentChunks } from '../ledger/chunks';
import { listPartitions, runTotals, type RunTotals } from '../ledger/partitions';
import { ACTIVE_RUN_STATUSES } from '../domain/statuses';
import type { Limits } from '../domain/types';
import { frozenTransformOf, getRun, ledgerExists, listRuns, type RunRow } from '../ledger/runs';
import { transformLabel } from '../domain/labels';
import { msUntilOpen } from '../domain/window';
import { undoFacts } from '../ledger/before-images';
import { conflictSummary, revertedPartitions, revertRunsOf, type ConflictSummary } from '../ledger/reverts';
import type { RunSubset } from '../compiler/subset';
import { listNotifications } from '../ledger/notifications';

export interface StatusReport {
  limits: Limits;
  /** The run's workflow in the Temporal Web UI (set by the CLI, from its configuration). */
  webUi?: string;
  /**
   * Set when the ledger shows the run active but its workflow has ended (a step the database
   * refused, a workflow terminated by hand): what Temporal says, and why. Absent when Temporal
   * was not asked or not reachable: status is the ledger's view first.
   */
  workflowEnded?: { status: string; why: string };
  /** Set while no worker serves the run's database queue: its work waits for one (operations/database-workers.ts). */
  waitingForWorker?: WorkerGap;
  /** Set while the run is outside its allowed hours: when they open. */
  windowOpensAt: string | null;
  runId: string;
  name: string;
  workflowId: string;
  status: string;
  paused: boolean;
  reason: string;
  startedBy: string;
  transform: string;
  specHash: string;
  createdAt: string;
  finishedAt: string | null;
  lastError: string | null;
  /** Rows in scope at the end that no planned partition covered (arrived after planning); null when not measured. */
  rowsOutsidePlan: number | null;
  specFile: string | null;
  totals: RunTotals;
  /** error: the ledger's full message (row values included; reading it takes database access). */
  failures: { partitionId: string; status: string; error: string | null; range: string | null; attempts: number }[];
  /** Running partitions that are not writing right now, and why (guard, window, pause). */
  holding: { partitionId: string; reason: string }[];
  events: { at: string; kind: string; actor: string | null; reason: string | null }[];
  /** Every gate of the newest attempt in sum, and each failure with its keys (row data: ledger access only). */
  gates: { stage: string; gate: string; partitionId: string | null; passed: boolean; rowsChecked: number; violations: number; examples: string | null }[];
  /** After-actions and their outcome; null when the spec has none. */
  downstream: { status: string | null; actions: { action: string; description: string; status: string; tries: number; error: string | null }[] } | null;
  consumers: string[];
  changesSemantics: boolean;
  /** Set while the run's canary holds it. */
  canaryHold?: string;
  /** `start --plan`: who approved the plan the run was started from. */
  approvedBy: string | null;
  /** `start --only-stale`: the run covers only the spec's stale partitions. */
  onlyStale: boolean;
  /** A run of part of the plan on purpose (`--partition`, `--from/--to`, `--only-stale`); null for the whole plan. */
  subset: RunSubset | null;
  /** Who was told what (the spec's `notify:`): each moment and target, and how delivering it went. */
  notifications: { moment: string; kind: string; target: string; status: string; attempts: number; error: string | null }[];
  /** Tables and functions the SQL transform reads, checked before each partition. */
  inputs: string[];
  /**
   * While the run is active: when it should end at the pace of its last minute of chunks, and,
   * for a run started from a saved plan, what that plan projected for the whole run.
   */
  eta: { seconds: number; rowsPerSecond: number; elapsedSeconds: number; plannedSeconds: number | null } | null;
  /** Rows in scope when the run registered, and whether counted (else the planner's estimate); null for older runs. */
  rowsPlanned: { rows: number; exact: boolean } | null;
  /** Partitions of this run with a chunk committed before an accepted input change (backfill stale lists them). */
  computedBeforeInputChange: number;
  /** The worker processes that wrote the run's chunks, most rows first (from the chunk log). */
  workers: { worker: string; chunks: number; rows: number }[];
  /**
   * Its before-images (docs/undo.md): kept how long, until when (set once the run finished), and
   * their size (null once dropped); null when the run keeps none (`undo: off`, or older runs).
   */
  undo: { keep: string; until: string | null; bytes: number | null } | 'off' | null;
  /** A revert run: the run it undoes, and the rows it left alone because they changed since (keys: row data, ledger only). */
  revert: { of: string; conflicts: ConflictSummary } | null;
  /** The revert runs of this run, and how many of its partitions are reverted. */
  revertedBy: { runs: { runId: string; status: string }[]; partitions: number } | null;
}

/** The report of run `runId`, which must be in this ledger. */
export async function statusReportFor(pool: pg.Pool, runId: string): Promise<StatusReport> {
  const run = await getRun(pool, runId);
  if (!run) throw new Error(`run ${runId} is not in the ledger`);
  return statusReport(pool, run);
}

export async function statusReport(pool: pg.Pool, run: RunRow): Promise<StatusReport> {
  const [totals, failures, events, running, gates, actions] = await Promise.all([
    runTotals(pool, run.run_id),
    listPartitions(pool, run.run_id, { status: ['failed'], limit: 20 }),
    listEvents(pool, run.run_id, 10),
    listPartitions(pool, run.run_id, { status: ['running'], limit: 100 }),
    gateResults(pool, run.run_id),
    listAfterActions(pool, run.run_id),
  ]);
  // the newest attempt's gates: in sum, and the failures by partition (at most 20)
  const current = gates.filter((g) => g.attempt === run.attempt && (g.partition_id === null || !g.passed)).slice(0, 60);
  const closedFor = run.limits.window && ACTIVE_RUN_STATUSES.includes(run.status) ? msUntilOpen(run.limits.window, new Date()) : 0;
  return {
    limits: run.limits,
    windowOpensAt: closedFor > 0 ? new Date(Date.now() + closedFor).toISOString() : null,
    runId: run.run_id,
    name: run.name,
    workflowId: run.workflow_id,
    status: run.status,
    paused: run.paused,
    reason: run.reason,
    startedBy: run.started_by,
    transform: transformLabel(frozenTransformOf(run)),
    specHash: run.spec_hash,
    createdAt: run.created_at.toISOString(),
    finishedAt: run.finished_at?.toISOString() ?? null,
    lastError: run.last_error,
    rowsOutsidePlan: run.rows_outside_plan === null || run.rows_outside_plan === undefined ? null : Number(run.rows_outside_plan),
    specFile: run.spec_file,
    totals,
    holding: running.filter((p) => p.hold_reason).map((p) => ({ partitionId: p.partition_id, reason: p.hold_reason! })),
    failures: failures.map((p) => ({
      partitionId: p.partition_id,
      status: p.status,
      error: p.error_detail ?? p.last_error,
      range: p.error_range,
      attempts: p.attempts,
    })),
    events: events.map((e: RunEventRow) => ({ at: e.at.toISOString(), kind: e.kind, actor: e.actor, reason: e.reason })),
    gates: current.map((g) => ({
      stage: g.stage,
      gate: g.gate,
      partitionId: g.partition_id,
      passed: g.passed,
      rowsChecked: Number(g.rows_checked),
      violations: Number(g.violations),
      examples: g.examples,
    })),
    downstream:
      (run.spec.after?.length ?? 0) > 0
        ? {
            status: run.downstream,
            actions: actions.map((a) => ({ action: a.action, description: a.description, status: a.status, tries: a.tries, error: a.last_error })),
          }
        : null,
    canaryHold: run.paused && ACTIVE_RUN_STATUSES.includes(run.status) ? await canaryHold(pool, run.run_id) : undefined,
    consumers: run.spec.downstream?.consumers ?? [],
    changesSemantics: run.spec.downstream?.changesSemantics === true,
    approvedBy: run.approved_by ?? null,
    onlyStale: run.only_stale === true,
    subset: run.subset,
    notifications: (await listNotifications(pool, run.run_id)).map((n) => ({
      moment: n.event_key,
      kind: n.kind,
      target: n.target,
      status: n.status,
      attempts: n.attempts,
      error: n.last_error,
    })),
    inputs: (run.input_fingerprints ?? []).map((f) => f.name),
    rowsPlanned:
      run.rows_planned === null || run.rows_planned === undefined ? null : { rows: Number(run.rows_planned), exact: run.rows_planned_exact === true },
    eta: ACTIVE_RUN_STATUSES.includes(run.status) && !run.paused ? await etaOf(pool, run, totals.rowsRead) : null,
    computedBeforeInputChange: await partitionsComputedBeforeInputChange(pool, run.run_id),
    workers: await chunkWriters(pool, run.run_id),
    undo: await undoOf(pool, run),
    revert: run.reverts ? { of: run.reverts, conflicts: await conflictSummary(pool, run.run_id) } : null,
    revertedBy: await revertedByOf(pool, run),
  };
}

async function revertedByOf(pool: pg.Pool, run: RunRow): Promise<StatusReport['revertedBy']> {
  if (!run.undo_table) return null;
  const runs = await revertRunsOf(pool, run.run_id);
  if (runs.length === 0) return null;
  return { runs: runs.map((r) => ({ runId: r.runId, status: r.status })), partitions: (await revertedPartitions(pool, run.run_id)).length };
}

async function undoOf(pool: pg.Pool, run: RunRow): Promise<StatusReport['undo']> {
  if (run.spec.undo === 'off') return 'off';
  if (!run.undo_table) return null;
  const facts = await undoFacts(pool, run.run_id);
  return facts && { keep: facts.keep, until: facts.until?.toISOString() ?? null, bytes: facts.bytes };
}

/** The pace of the run's last minute of chunks (from its chunk log), carried over the rows still to read. */
async function etaOf(pool: pg.Pool, run: RunRow, rowsRead: number): Promise<StatusReport['eta']> {
  if (run.rows_planned === null || run.rows_planned === undefined) return null;
  const recent = await recentChunks(pool, run.run_id, 60);
  const window = recent.since ? Math.max(1, (Date.now() - recent.since.getTime()) / 1000) : 0;
  const rate = window > 0 ? recent.rows / window : 0;
  if (rate <= 0) return null;
  const remaining = Math.max(0, Number(run.rows_planned) - rowsRead);
  const planned = (run.approved_plan?.estimate as { projected?: { durationSeconds?: number } } | undefined)?.projected?.durationSeconds;
  return {
    seconds: remaining / rate,
    rowsPerSecond: Math.round(rate),
    elapsedSeconds: (Date.now() - (run.started_at ?? run.created_at).getTime()) / 1000,
    plannedSeconds: typeof planned === 'number' ? planned : null,
  };
}

export interface RunSummary {
  /** The run's workflow in the Temporal Web UI (set by the CLI, from its configuration). */
  webUi?: string;
  runId: string;
  name: string;
  status: string;
  startedBy: string;
  createdAt: string;
  finishedAt: string | null;
}

/** Runs in the ledger, newest first; none when the ledger does not exist yet. */
export async function listRunSummaries(pool: pg.Pool, filter: { status?: string; name?: string } = {}): Promise<RunSummary[]> {
  const runs = (await ledgerExists(pool)) ? await listRuns(pool, filter) : [];
  return runs.map((r) => ({
    runId: r.run_id,
    name: r.name,
    status: r.status,
    startedBy: r.started_by,
    createdAt: r.created_at.toISOString(),
    finishedAt: r.finished_at?.toISOString() ?? null,
  }));
}
