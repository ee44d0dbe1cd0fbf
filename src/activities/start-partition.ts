/**
 * startPartitionWorkflow: starts one partition's workflow as a workflow of its own, through the
 * worker's client. The run workflow calls it as a local activity, so a start costs the run one
 * marker in a workflow task it completes anyway, and no child event ever reaches the run: the
 * run's mutable state, which Temporal's production server locks for every event, is touched
 * once per partition (its report) instead of four times (the child's start, started, report
 * and completion). The README, "Why partitions are not the run's child workflows", says what
 * this trades.
 *
 * Runs on the worker that holds the run's workflow task, touches no database, and may run more
 * than once for one launch (a worker that dies before the task completes): the partition's
 * workflow id is the run's and the partition's, so a second start while the first runs is
 * refused and taken as started, and a start after the first finished runs a partition that
 * returns its recorded result and writes nothing (process-partition.ts).
 */
import { Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { PartitionGroupInput, PartitionWorkflowInput } from '../domain/types';
import type { WorkerDeployment } from '../temporal/worker-versioning';
import { withCallDeadline } from './temporal-call-deadline';

export interface PartitionStart {
  workflowId: string;
  /** The partition's queue: its database's, or the run's own for runs started before routing. */
  taskQueue: string;
  input: PartitionWorkflowInput;
  /** What the Web UI shows on the partition's row and page. */
  summary: string;
  /** Small partitions started together, in one group workflow (`input` is then its first member's). */
  group?: PartitionGroupInput;
}

export interface PartitionStarted {
  /** The partition workflow's run id; absent when it was already running (started by an earlier attempt of this launch). */
  partitionRunId?: string;
  /** Its first workflow task came back in the start's reply, to this worker (eager start). */
  eagerlyStarted?: boolean;
}

/** Under the run's local activity's start-to-close timeout (a minute), so the start fails and is retried before it. */
const START_DEADLINE_MS = 30_000;

export function startPartitionActivity(deployment: WorkerDeployment | undefined) {
  return async function startPartitionWorkflow(start: PartitionStart): Promise<PartitionStarted> {
    const { client } = Context.current();
    try {
      // past its deadline this local activity's retry is what gets the partition started
      const handle = await withCallDeadline(
        client,
        () =>
          client.workflow.start(start.group ? 'backfillPartitionGroupWorkflow' : 'backfillPartitionWorkflow', {
            workflowId: start.workflowId,
            taskQueue: start.taskQueue,
            args: [start.group ?? start.input],
            staticSummary: start.summary,
            staticDetails: startDetails(start),
            // where this worker polls the partition's queue and has a workflow slot free, the
            // partition's first workflow task comes back in the start's reply (the SDK asks only then).
            // Not for a partition whose first attempt is local: that attempt runs where its workflow
            // task runs, and eagerly every small partition of the run would run on the run's worker;
            // through the queue they spread over every worker of the database
            requestEagerStart: !start.input.localFirst,
            // the partition's local attempt runs in this workflow task (backfill-partition.ts): a worker
            // that dies under it is noticed when the task times out, as the activity's heartbeat would notice
            ...(start.input.heartbeatTimeoutMs !== undefined ? { workflowTaskTimeout: Math.min(10_000, start.input.heartbeatTimeoutMs) } : {}),
            // a pinned run's partitions finish on its build, as its children did: this local
            // activity runs on the worker that holds the run's workflow task, so on the run's build
            ...(deployment?.behavior === 'PINNED'
              ? { versioningOverride: { pinnedTo: { deploymentName: deployment.name, buildId: deployment.buildId } } }
              : {}),
          }),
        START_DEADLINE_MS,
      );
      return { partitionRunId: handle.firstExecutionRunId, eagerlyStarted: handle.eagerlyStarted };
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return {};
      throw err;
    }
  };
}

/** What the Web UI shows on a partition's or a group's page: the run that started it, and a group's members. */
export function startDetails(start: Pick<PartitionStart, 'input' | 'group'>): string {
  const run = `Started by the run workflow \`${start.input.runWorkflowId}\``;
  if (!start.group) return `${run} (it is not a child: the run learns of the partition by its report).`;
  const members = start.group.members.map((m) => `\`${m.partitionId}\``).join(', ');
  return (
    `${run} (it is not a child: the run learns of its partitions by their reports). ` +
    `Its partitions: ${members}. Each runs its first attempt in this workflow's first task; one that needs longer carries on as its own activity here.`
  );
}
