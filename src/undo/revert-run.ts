/**
 * Starting a revert (docs/undo.md): a run of its own kind that puts back what run `of` wrote,
 * from its before-images, row by row and only where nothing changed since. Refused here, before
 * anything starts, for the reasons the worker's registration refuses it (not finished, no images,
 * past its window, a partition unknown or reverted already, its target busy).
 */
import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { revertable } from '../ledger/reverts';
import { findActiveRunOnTarget, type RunRow } from '../ledger/runs';
import { runWorkflowId } from '../domain/ids';
import { targetBusyMessage } from '../domain/labels';
import type { Spec } from '../specs/schema';
import { canonicalJson } from '../util/canonical-json';
import { sha256 } from '../util/hash';
import { ensureSearchAttributes } from '../temporal/search-attributes';
import type { RunWorkflowInput } from '../workflows/backfill-run';
import { UsageError } from '../domain/usage-error';
import { newRunId } from '../operations/run-id';
import { startRunWorkflow } from '../operations/run-workflow';
import { waitForRegistration, type StartedRun } from '../operations/start-run';

export interface RevertOptions {
  reason: string;
  actor: string;
  /** Only these partitions of the run (default: every partition it wrote that no revert restored). */
  partitions?: string[];
  runId?: string;
  registrationTimeoutMs?: number;
  /** Asked once the revert is possible, before anything is done: throw to stop it. */
  confirm?: (what: { partitions: number }) => Promise<void>;
}

export async function revertRun(temporal: { client: Client; pool: pg.Pool; taskQueue: string }, original: RunRow, options: RevertOptions): Promise<StartedRun> {
  if (!options.reason.trim()) throw new UsageError('--reason is required: why this run is undone is kept in the audit record');
  const can = await revertable(temporal.pool, original.run_id, options.partitions);
  if (!can.ok) throw new UsageError(can.refusal);
  const busy = original.target_relation && (await findActiveRunOnTarget(temporal.pool, original.target_relation));
  if (busy) throw new UsageError(targetBusyMessage(original.target_relation!, { runId: busy.run_id, name: busy.name, status: busy.status }));
  // asked once the revert is known to be possible: a refusal is said first, and nothing is done before the answer
  await options.confirm?.({ partitions: can.partitions.length });
  const spec = revertSpec(original.spec, options.reason);
  const runId = options.runId ?? newRunId();
  await ensureSearchAttributes(temporal.client);
  const input: RunWorkflowInput = {
    kind: 'revert',
    runId,
    spec,
    // hashed as every spec is: the same spec, the same hash, whoever serialised it
    specHash: sha256(canonicalJson(spec)),
    transform: { name: original.transform_name, version: original.transform_version, kind: original.transform_kind, codeHash: original.transform_hash },
    startedBy: options.actor,
    ...(original.database_identity ? { databaseIdentity: original.database_identity } : {}),
    reverts: original.run_id,
    reason: options.reason,
    ...(options.partitions?.length ? { partitions: options.partitions } : {}),
  };
  const handle = await startRunWorkflow(temporal.client, temporal.taskQueue, input, {
    status: 'pending',
    summary: `${spec.name}: revert of ${original.name}/${original.run_id} — ${options.reason}, ${can.partitions.length} partitions`,
    details: [
      `**Revert** of run \`${original.run_id}\` (${original.name}) — ${options.reason}`,
      '',
      `- puts back, from its before-images, every row it changed that nobody changed since; the rest are conflicts, left alone`,
      `- ${can.partitions.length} partitions; target \`${original.spec.target.table}\` (${original.spec.target.mode})`,
    ].join('\n'),
  });
  await waitForRegistration(temporal.pool, handle, runId, options.registrationTimeoutMs ?? 60_000);
  return { runId, workflowId: runWorkflowId(spec.name, runId), name: spec.name, partitions: can.partitions.length, warnings: [], handle };
}

/**
 * The revert's spec: the original's, renamed (it holds its own name while it runs), with no gates
 * (they recompute the transform, which a revert undoes), no images of its own and no tail
 * splitting (its partitions are lists of the original's chunks, not key ranges to cut);
 * after-actions stay, so aggregates and views are refreshed once the old rows are back.
 */
export function revertSpec(original: Spec, reason: string): Spec {
  const { validate: _validate, ...rest } = original;
  const { splitTail: _splitTail, ...limits } = original.limits;
  return { ...rest, name: `${original.name.slice(0, 56)}-revert`, reason, undo: 'off', limits };
}
