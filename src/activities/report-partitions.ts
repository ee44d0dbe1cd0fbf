/**
 * reportPartitions: a group's finished members go to their run in one signal, sent from the
 * group's own workflow task as a local activity (backfill-partition.ts). Sent as a workflow
 * command instead, the signal would wait for the task's completion and the server's transfer
 * queue, and the group would need a second workflow task to hear it was delivered before it
 * could close: on the production server each of those is a durable write.
 *
 * Delivered at least once: a group's task that runs again (its worker died after this signal)
 * sends it again, and the run ignores a report of a partition no longer in flight, as it does a
 * retried activity's. When the signal fails, the group's workflow sends it as a command, as
 * groups started before this did.
 */
import { Context } from '@temporalio/activity';
import type { PartitionReport } from '../domain/types';
import { partitionsFinishedSignal } from '../workflows/messages';
import { withCallDeadline } from './temporal-call-deadline';

export interface PartitionsToReport {
  runWorkflowId: string;
  reports: PartitionReport[];
}

/** Whether the run has the reports; false leaves them to the group's workflow. */
export async function reportPartitions({ runWorkflowId, reports }: PartitionsToReport): Promise<boolean> {
  const { client, log } = Context.current();
  try {
    await withCallDeadline(client, () => client.workflow.getHandle(runWorkflowId).signal(partitionsFinishedSignal, reports));
    return true;
  } catch (err) {
    log.warn('could not report to the run; the group workflow will', { runWorkflowId, error: (err as Error).message });
    return false;
  }
}
