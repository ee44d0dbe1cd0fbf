/**
 * The run's tail: a slot with no partition left to start asks for a running partition to be cut
 * (split-tail/split-activity.ts) and takes the part cut off, which the run's next plan page holds.
 * Specs only carry `limits.splitTail` since this code exists, so no recorded history reaches it
 * without it and it needs no patch.
 */
import * as split from '../split-state';
import type { RunExecution } from './execution';

export async function splitTail(x: RunExecution): Promise<void> {
  const key = split.tailKey(x.s);
  const { piece, partitions } = await x.acts.splitTail({ database: x.database, runId: x.runId, running: x.s.inFlight });
  x.s = split.partitionsCut(x.s, partitions);
  x.splitTried = piece ? undefined : key;
  // the part cut off comes after every partition of the plan, where the next page starts; read
  // it even when this answer names none: an earlier attempt of the activity may have cut one
  x.exhausted = false;
  x.publishNow();
}
