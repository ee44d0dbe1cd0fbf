/**
 * registerRevert: records a revert run (docs/undo.md) — a run of its own kind on the same
 * engine, whose partitions are the original run's partitions (each one list value: its id, so
 * the run's completeness proof holds for any subset) and whose chunks restore the original's
 * chunks' before-images, one original chunk each — after checking, on the worker, what `backfill revert` checked: the original
 * finished, kept images that are still there, inside its window, and nothing else is writing
 * its target. Idempotent like registerRun: a retry finds the run registered and returns it.
 */
import { ApplicationFailure } from '@temporalio/common';
import { withTransaction } from '../db/pool';
import { quoteTable } from '../db/sql';
import { prepareImagesForRevert } from '../ledger/before-images';
import { recordEvent } from '../ledger/events';
import { migrateLedger } from '../ledger/migrate';
import { insertPartitions } from '../ledger/partitions';
import { revertable } from '../ledger/reverts';
import { findActiveRunOnTarget, getRun, insertRun, resolveRelation, transitionRun } from '../ledger/runs';
import { FailureType } from '../domain/failures';
import { targetBusyMessage } from '../domain/labels';
import type { Spec } from '../specs/schema';
import type { RunOpening } from '../workflows/run-state';
import { refuseOtherDatabase } from '../activities/database-check';
import type { ActivityDeps } from '../activities/deps';
import { frozenTransformOf } from '../ledger/runs';
import { engineVersion } from '../util/engine-version';
import { firstOpening } from '../activities/first-opening';

export interface RegisterRevertInput {
  runId: string;
  workflowId: string;
  /** The revert's spec: the original's, renamed, without gates, keeping no images of its own. */
  spec: Spec;
  specHash: string;
  /** The run it undoes, and (`--partition`) only these of its partitions. */
  reverts: string;
  partitions?: string[];
  reason: string;
  startedBy: string;
  databaseIdentity?: string;
  pageSize: number;
}

export function registerRevertActivity(deps: ActivityDeps) {
  return async function registerRevert(input: RegisterRevertInput): Promise<RunOpening> {
    const pool = deps.pools.get(input.spec.database);
    await refuseOtherDatabase(pool, input.databaseIdentity, input.runId, input.spec.database);
    await migrateLedger(pool);
    const partitionsTotal = (await getRun(pool, input.runId))?.partitions_total ?? (await register(input));
    return firstOpening(pool, input.runId, partitionsTotal, input.pageSize, deps.notifyDefault);
  };

  async function register(input: RegisterRevertInput): Promise<number> {
    const pool = deps.pools.get(input.spec.database);
    const refuse = (message: string) => ApplicationFailure.nonRetryable(message, FailureType.SpecInvalid);
    const original = await getRun(pool, input.reverts);
    const can = await revertable(pool, input.reverts, input.partitions);
    if (!original || !can.ok) throw refuse(can.ok ? `run ${input.reverts} is not in the ledger` : can.refusal);
    const targetRelation = (await resolveRelation(pool, original.spec.target.table))!;
    const busy = await findActiveRunOnTarget(pool, targetRelation);
    if (busy) throw refuse(targetBusyMessage(targetRelation, { runId: busy.run_id, name: busy.name, status: busy.status }));
    const revertShape = await prepareImagesForRevert(pool, input.reverts, quoteTable(original.spec.target.table));
    const partitions = can.partitions.map((p, ordinal) => ({ id: p.id, ordinal, bounds: { kind: 'list' as const, column: 'partition', value: p.id } }));
    await withTransaction(pool, async (client) => {
      const inserted = await insertRun(client, {
        runId: input.runId,
        name: input.spec.name,
        workflowId: input.workflowId,
        reason: input.reason,
        spec: input.spec,
        specHash: input.specHash,
        transform: frozenTransformOf(original),
        databaseVar: input.spec.database,
        limits: input.spec.limits,
        shape: { ...original.shape, revert: revertShape },
        partitionsTotal: partitions.length,
        startedBy: input.startedBy,
        targetRelation,
        databaseIdentity: input.databaseIdentity,
        engineVersion: engineVersion(),
        reverts: input.reverts,
      });
      if (!inserted) return;
      await insertPartitions(client, input.runId, partitions);
      await transitionRun(client, input.runId, 'running');
      const detail = { reverts: input.reverts, partitions: partitions.length, ...(input.partitions?.length ? { only: input.partitions } : {}) };
      await recordEvent(client, { runId: input.runId, key: 'registered', kind: 'registered', actor: input.startedBy, reason: input.reason, detail });
      await recordEvent(client, { runId: input.runId, key: 'started', kind: 'started', actor: input.startedBy, reason: input.reason });
      // the original's audit record names its revert too
      await recordEvent(client, {
        runId: input.reverts,
        key: `revert-${input.runId}`,
        kind: 'revert-started',
        actor: input.startedBy,
        reason: input.reason,
        detail: { revertRun: input.runId, partitions: partitions.map((p) => p.id) },
      });
    });
    deps.logger.info({ runId: input.runId, reverts: input.reverts, partitions: partitions.length }, 'revert registered');
    return partitions.length;
  }
}
