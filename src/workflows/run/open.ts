/**
 * The first execution of a run (or of a retry attempt) opens it in the ledger and takes the
 * first plan page; a new run then captures the distribution gate's baseline, picks its canary
 * and cuts its ramp stages, all before anything is written.
 */
import { workflowInfo } from '@temporalio/workflow';
import * as gates from '../gate-state';
import * as run from '../run-state';
import { PAGE, type RunExecution } from './execution';
import type { RunOpening } from '../run-state';

export async function openRun(x: RunExecution): Promise<void> {
  const { input, spec, database, runId } = x;
  const opening = await open(x);
  x.workerNotify = opening.notify;
  x.s = run.opened(x.s, opening, input.kind === 'retry');
  x.queue = opening.firstPage;
  x.exhausted = x.queue.length < PAGE;
  if (!x.gated || input.kind === 'retry') return;
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

/** Registers the run in the ledger, as its kind is registered, and returns its first plan page. */
function open(x: RunExecution): Promise<RunOpening> {
  const { input, spec, database, runId } = x;
  const workflowId = workflowInfo().workflowId;
  const { specHash, startedBy, databaseIdentity } = input;
  switch (input.kind) {
    case 'retry':
      return x.acts.startRunAttempt({ database, runId, attempt: input.attempt, actor: input.actor, reason: input.reason, pageSize: PAGE });
    case 'revert':
      return x.acts.registerRevert({
        runId,
        workflowId,
        spec,
        specHash,
        reverts: input.reverts,
        ...(input.partitions ? { partitions: input.partitions } : {}),
        reason: input.reason,
        startedBy,
        databaseIdentity,
        pageSize: PAGE,
      });
    case 'run':
      return x.acts.registerRun({
        runId,
        workflowId,
        spec,
        specFile: input.specFile,
        specHash,
        transform: input.transform,
        startedBy,
        databaseIdentity,
        ...(input.approval ? { approval: input.approval } : {}),
        ...(input.onlyStale ? { onlyStale: true } : {}),
        ...(input.subset ? { subset: input.subset } : {}),
        ...(input.fleet ? { fleet: input.fleet } : {}),
        pageSize: PAGE,
      });
  }
}
