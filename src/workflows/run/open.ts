/**
 * The first execution of a run (or of a retry attempt) opens it in the ledger and takes the
 * first plan page; a new run then captures the distribution gate's baseline, picks its canary
 * and cuts its ramp stages, all before anything is written.
 */
import { workflowInfo } from '@temporalio/workflow';
import * as gates from '../gate-state';
import * as run from '../run-state';
import { PAGE, type RunExecution } from './execution';

export async function openRun(x: RunExecution): Promise<void> {
  const { input, spec, database, runId } = x;
  const opening = input.retry
    ? await x.acts.startRunAttempt({ database, runId, ...input.retry, pageSize: PAGE })
    : input.revert
      ? await x.acts.registerRevert({
          runId,
          workflowId: workflowInfo().workflowId,
          spec,
          specHash: input.specHash,
          reverts: input.revert.of,
          ...(input.revert.partitions ? { partitions: input.revert.partitions } : {}),
          reason: input.revert.reason,
          startedBy: input.startedBy,
          databaseIdentity: input.databaseIdentity,
          pageSize: PAGE,
        })
      : await x.acts.registerRun({
          runId,
          workflowId: workflowInfo().workflowId,
          spec,
          specFile: input.specFile,
          specHash: input.specHash,
          transform: input.transform,
          startedBy: input.startedBy,
          databaseIdentity: input.databaseIdentity,
          ...(input.approval ? { approval: input.approval } : {}),
          ...(input.onlyStale ? { onlyStale: true } : {}),
          pageSize: PAGE,
        });
  x.s = run.opened(x.s, opening, input.retry !== undefined);
  x.queue = opening.firstPage;
  x.exhausted = x.queue.length < PAGE;
  if (!x.gated || input.retry) return;
  // a failed capture leaves no baseline, which fails the distribution gate at the end, saying so
  if ((spec.validate?.distributions?.length ?? 0) > 0) await x.checks.captureDistributions({ database, runId }).catch(() => 0);
  const canary = spec.validate?.canary;
  if (canary) {
    const picked = await x.acts.pickCanary({ database, runId, count: canary.partitions });
    x.s = gates.canaryPicked(
      x.s,
      picked.map((p) => p.id),
    );
  }
  if (spec.validate?.ramp) x.s = gates.rampStarted(x.s, gates.rampCutoffs(x.s.partitionsTotal, spec.validate.ramp));
}
