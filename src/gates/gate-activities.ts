/**
 * The gates, as activities of the run workflow: pickCanary chooses the canary's partitions,
 * checkCanary judges them once they finished, checkFinal judges the whole run before
 * finalizeRun, its partitions compared in lanes (checkFinalLane). All read-only on the data;
 * results go to backfill.gate_results. A check may take long on a large run: it heartbeats
 * where it is, and a retry continues from there.
 */
import { inParallel } from '../util/in-parallel';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { failsEveryTime, summarizePgError } from '../db/errors';
import { FailureType } from '../domain/failures';
import { TransformError } from '../transforms/transform-error';
import { partitionOutcomes, partitionsAtOrdinals, succeededFrom, unsucceededBetween } from '../ledger/partition-reads';
import { getRun } from '../ledger/runs';
import { DEFAULT_STATEMENT_TIMEOUT_SECONDS, MAX_CHECK_CONCURRENCY } from '../domain/limits';
import {
  canaryOrdinals,
  checkPartition,
  checkRunInvariants,
  emptyTally,
  finalSampleEvery,
  mergeTallies,
  recordCheck,
  recordTally,
  tallyCheck,
  typesFor,
  type GateContext,
  type GateTally,
} from './gate-checks';
import { captureColumn, driftProblems } from './distributions';
import { loadCaptures, storeCapture } from '../ledger/distributions';
import type { ActivityDeps } from '../activities/deps';
import type { RunContext, RunContextCache } from '../activities/run-context';
import { recordProgress } from '../activities/heartbeat-ticker';

export interface GateVerdict {
  passed: boolean;
  /** What failed, without row data (keys stay in the ledger). */
  failures: string[];
  failureCount: number;
  partitionsChecked: number;
}

/** Source keys per comparison page (before sampling). */
const PAGE_ROWS = 20_000;
const PARTITIONS_PER_READ = 100;

function verdict(t: GateTally): GateVerdict {
  return { passed: t.failureCount === 0, failures: t.failures, failureCount: t.failureCount, partitionsChecked: t.partitionsChecked };
}

export function gateActivities(deps: ActivityDeps, contexts: RunContextCache) {
  async function gateContext(pool: pg.Pool, ctx: RunContext, stage: 'canary' | 'ramp' | 'final', sampleEvery: number): Promise<GateContext> {
    const run = await getRun(pool, ctx.run.run_id);
    return {
      pool,
      ctx,
      runId: ctx.run.run_id,
      attempt: run!.attempt,
      stage,
      sampleEvery,
      timeoutMs: (ctx.spec.limits.statementTimeoutSeconds ?? DEFAULT_STATEMENT_TIMEOUT_SECONDS) * 1000,
      // the run's chunk size is what its transform is known to finish within the statement timeout
      pageRows: Math.min(PAGE_ROWS, ctx.spec.limits.chunkSize),
      recordPassing: stage === 'canary',
      onPage: () => recordProgress(),
    };
  }

  /**
   * A check the database refuses the same way every time (an invariant dividing by zero, a type
   * it cannot compare) fails at once, not after ten tries and minutes of backoff: the run's gate
   * then fails with the reason (the workflow's `judged`). So does a TypeScript transform that
   * throws while a check recomputes it: it is deterministic, and would throw again. The message
   * names the check and the error's kind, never a row value (it travels through Temporal).
   */
  async function checkRefusedAtOnce<T>(what: string, check: () => Promise<T>): Promise<T> {
    try {
      return await check();
    } catch (err) {
      if (failsEveryTime(err)) throw ApplicationFailure.nonRetryable(`${what} was refused by the database: ${summarizePgError(err)}`, FailureType.DataError);
      if (err instanceof TransformError) throw ApplicationFailure.nonRetryable(`${what} could not recompute: ${err.summary}`, FailureType.DataError);
      throw err;
    }
  }

  return {
    async pickCanary(input: { database: string; runId: string; count: number | string }): Promise<{ id: string; ordinal: number }[]> {
      const pool = deps.pools.get(input.database);
      const run = await getRun(pool, input.runId);
      const ordinals = canaryOrdinals(run!.partitions_total, input.count);
      return partitionsAtOrdinals(pool, input.runId, ordinals);
    },

    checkStage: (input: { database: string; runId: string; stage: number; fromOrdinal: number; toOrdinal: number }): Promise<GateVerdict> =>
      checkRefusedAtOnce(`the check of ramp stage ${input.stage}`, () => checkStage(input)),
    captureDistributions: (input: { database: string; runId: string }): Promise<number> =>
      checkRefusedAtOnce('the distribution baseline', () => captureDistributions(input)),
    checkCanary: (input: { database: string; runId: string; partitionIds: string[] }): Promise<GateVerdict> =>
      checkRefusedAtOnce('the canary check', () => checkCanary(input)),
    checkFinal: (input: { database: string; runId: string; lanes?: GateTally[] }): Promise<GateVerdict> =>
      checkRefusedAtOnce('the final check', () => checkFinal(input)),
    checkFinalLane: (input: { database: string; runId: string; lane: number; of: number }): Promise<GateTally> =>
      checkRefusedAtOnce('the final check', () => checkFinalLane(input)),
  };

  /**
   * A ramp stage's gates: its succeeded partitions (ordinals from..to) recomputed for the final
   * check's sample and their partition invariants checked; also that none of them failed.
   */
  async function checkStage(input: { database: string; runId: string; stage: number; fromOrdinal: number; toOrdinal: number }): Promise<GateVerdict> {
    const pool = deps.pools.get(input.database);
    const ctx = await contexts.get(pool, input.runId);
    const g = await gateContext(pool, ctx, 'ramp', finalSampleEvery(ctx.spec.validate));
    const tally = await checkPartitionRange(g, input.fromOrdinal, input.toOrdinal, checkConcurrency(g));
    for (const r of await unsucceededBetween(pool, input.runId, input.fromOrdinal, input.toOrdinal, 10)) {
      tally.failureCount++;
      if (tally.failures.length < 10) tally.failures.push(`partition ${r.partition_id} ${r.status}`);
    }
    await recordTally({ ...g, stageLabel: `stage ${input.stage}: ` }, tally);
    return verdict(tally);
  }

  /** Captures the declared distributions before the run writes anything: the baseline of the final gate. */
  async function captureDistributions(input: { database: string; runId: string }): Promise<number> {
    const pool = deps.pools.get(input.database);
    const run = (await getRun(pool, input.runId))!;
    const timeoutMs = (run.spec.limits.statementTimeoutSeconds ?? DEFAULT_STATEMENT_TIMEOUT_SECONDS) * 1000;
    const checks = run.spec.validate?.distributions ?? [];
    for (const check of checks) {
      await storeCapture(pool, input.runId, run.attempt, 'before', await captureColumn(pool, run.spec.target.table, check.column, null, timeoutMs));
      recordProgress();
    }
    return checks.length;
  }

  /** The canary's partitions must have succeeded, match the transform row for row, and keep every partition invariant. */
  async function checkCanary(input: { database: string; runId: string; partitionIds: string[] }): Promise<GateVerdict> {
    const pool = deps.pools.get(input.database);
    const ctx = await contexts.get(pool, input.runId);
    const g = await gateContext(pool, ctx, 'canary', 1);
    const tally = emptyTally();
    const rows = await partitionOutcomes(pool, input.runId, input.partitionIds);
    const unfinished = rows.filter((r) => r.status !== 'succeeded');
    for (const r of unfinished) {
      tally.failureCount++;
      tally.failures.push(`partition ${r.partition_id} ${r.status}${r.last_error ? `: ${r.last_error}` : ''}`);
    }
    const types = await typesFor(g);
    for (const r of rows.filter((p) => p.status === 'succeeded')) await checkPartition(g, { id: r.partition_id, bounds: r.bounds }, tally, types);
    await recordTally(g, tally, { partitions: { passed: unfinished.length === 0, violations: unfinished.length } });
    return verdict(tally);
  }

  /**
   * The whole-run check: every succeeded partition recomputed for a deterministic sample of
   * its keys (validate.finalCheck) and compared with the target now — which catches a later
   * partition or the application overwriting rows an earlier chunk wrote — then every
   * invariant. Given the lanes' tallies (checkFinalLane), it adds the run's own checks to them;
   * without, it compares the partitions itself (executions recorded before the lanes). Resumes
   * from its last heartbeat.
   */
  async function checkFinal(input: { database: string; runId: string; lanes?: GateTally[] }): Promise<GateVerdict> {
    const pool = deps.pools.get(input.database);
    const ctx = await contexts.get(pool, input.runId);
    const g = await gateContext(pool, ctx, 'final', finalSampleEvery(ctx.spec.validate));
    const tally = input.lanes ? mergeTallies(input.lanes) : await checkPartitionRange(g, 0, null, checkConcurrency(g));
    await checkRunInvariants(g, tally);
    await checkDistributions(g, tally);
    await recordTally(g, tally);
    return verdict(tally);
  }

  /**
   * One lane of the whole-run check: the succeeded partitions whose ordinal is `lane` modulo
   * `of`, compared and checked one at a time; its tally goes to checkFinal. The run workflow
   * starts one lane per concurrency slot, so the check reads at the run's concurrency in
   * activity slots across the workers — on sessions that have been reading this run's tables,
   * where one activity opening a session per lane would start cold ones (bench/RESULTS.md).
   */
  async function checkFinalLane(input: { database: string; runId: string; lane: number; of: number }): Promise<GateTally> {
    const pool = deps.pools.get(input.database);
    const ctx = await contexts.get(pool, input.runId);
    const g = await gateContext(pool, ctx, 'final', finalSampleEvery(ctx.spec.validate));
    return checkPartitionRange(g, 0, null, 1, { lane: input.lane, of: input.of });
  }
}

/** Each declared distribution captured again and compared with its baseline from before the run wrote. */
async function checkDistributions(g: GateContext, tally: GateTally): Promise<void> {
  const checks = g.ctx.spec.validate?.distributions ?? [];
  if (checks.length === 0) return;
  const captures = await loadCaptures(g.pool, g.runId);
  for (const check of checks) {
    const started = Date.now();
    const before = captures.find((c) => c.stage === 'before' && c.column === check.column);
    const after = await captureColumn(g.pool, g.ctx.spec.target.table, check.column, before?.histogram ?? null, g.timeoutMs);
    await storeCapture(g.pool, g.runId, g.attempt, 'after', after);
    const gate = `distribution:${check.column}`;
    // the spec is frozen with the run: a declared distribution without a baseline means its capture failed
    const problems = before ? driftProblems(check, before, after) : ['no baseline was captured before the run wrote, so drift cannot be measured'];
    const note = before?.rows === 0 ? 'no baseline: the target was empty before the run' : undefined;
    g.onPage?.();
    tallyCheck(tally, gate, { rowsChecked: after.rows, violations: problems.length, failure: `distribution ${check.column}: ${problems.join(', ')}` });
    await recordCheck(g, {
      gate,
      partitionId: null,
      rowsChecked: after.rows,
      violations: problems.length,
      examples: problems.join('; ') || note,
      startedAt: started,
    });
  }
}

/**
 * The succeeded partitions with ordinals in [from, to) (to null: the rest of the plan) — of a
 * lane, only those whose ordinal is `lane` modulo `of` —, each compared and checked, `concurrency`
 * at a time; resumes from the activity's last heartbeat.
 */
async function checkPartitionRange(
  g: GateContext,
  from: number,
  to: number | null,
  concurrency: number,
  lane?: { lane: number; of: number },
): Promise<GateTally> {
  const activity = Context.current();
  const resumed = activity.info.heartbeatDetails as { ordinal: number; tally: GateTally } | undefined;
  let ordinal = resumed?.ordinal ?? from;
  const tally = resumed?.tally ?? emptyTally();
  const types = await typesFor(g);
  const perPartition = g.sampleEvery > 0 || (g.ctx.spec.validate?.invariants ?? []).some((i) => (i.scope ?? 'partition') === 'partition');
  while (perPartition) {
    const rows = await succeededFrom(g.pool, g.runId, ordinal, to, PARTITIONS_PER_READ);
    const mine = lane ? rows.filter((r) => r.ordinal % lane.of === lane.lane) : rows;
    await inParallel(mine, concurrency, async (r) => {
      await checkPartition(g, { id: r.partition_id, bounds: r.bounds }, tally, types);
    });
    if (rows.length > 0) {
      ordinal = rows[rows.length - 1].ordinal + 1;
      recordProgress({ ordinal, tally });
    }
    if (rows.length < PARTITIONS_PER_READ) break;
  }
  return tally;
}

/** The run's own concurrency, within the worker's connection pool (a check without lanes, and the ramp's stages). */
function checkConcurrency(g: GateContext): number {
  return Math.max(1, Math.min(g.ctx.spec.limits.concurrency, MAX_CHECK_CONCURRENCY));
}
