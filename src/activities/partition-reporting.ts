/**
 * Says what a running partition is doing, on the three channels that need it: the
 * activity heartbeat (progress and state, never key values, for the Web UI's pending activity),
 * the ledger's hold_reason (for `status` and `watch`, written only on change), and the run
 * workflow (a partitionCondition signal, for states the run shows; see ConditionReporter).
 */
import { heartbeat, type Context } from '@temporalio/activity';
import type pg from 'pg';
import type { Logger } from 'pino';
import { setHoldReason, type PartitionRow } from '../ledger/partitions';
import { PartitionState, REPORTED_PARTITION_STATES } from '../domain/types';
import { partitionConditionSignal } from '../workflows/messages';
import { ConditionReporter } from './condition-reporter';
import { withCallDeadline } from './temporal-call-deadline';

export interface ChunkHeartbeat {
  partitionId: string;
  chunks: number;
  rowsWritten: number;
  state: PartitionState;
}

export class PartitionReporting {
  private beat: ChunkHeartbeat;
  private holdReason: string | null | undefined;
  private readonly reporter: ConditionReporter;
  // a ticker, so a long statement still heartbeats; the SDK throttles what it sends
  private readonly ticker: NodeJS.Timeout;
  // a local attempt has no heartbeat: its workflow task is what Temporal watches
  private readonly beats: boolean;

  constructor(
    private readonly pool: pg.Pool,
    activity: Context,
    private readonly ids: { runId: string; partitionId: string; runWorkflowId: string },
    row: PartitionRow,
    log: Logger,
  ) {
    this.beat = { partitionId: ids.partitionId, chunks: row.chunks, rowsWritten: Number(row.rows_written), state: PartitionState.Writing };
    this.reporter = new ConditionReporter(
      ids.partitionId,
      // with a deadline: close() waits for a report in flight, and the partition's end with it
      (condition) => withCallDeadline(activity.client, () => activity.client.workflow.getHandle(ids.runWorkflowId).signal(partitionConditionSignal, condition)),
      log,
      // a reason left in the ledger means an earlier attempt may have told the run we were held
      { stale: row.hold_reason !== null },
    );
    // the first beat comes with the first tick: a partition done within a second never costs the
    // server a heartbeat write (liveness needs one per heartbeatTimeout, 15 s by default)
    this.beats = !activity.info.isLocal;
    this.ticker = setInterval(() => {
      if (this.beats) heartbeat(this.beat);
      this.reporter.flush();
    }, 1000);
    // the ledger's hold_reason as this attempt found it: clearing a clear one is a wasted round trip
    this.holdReason = row.hold_reason;
  }

  /** Enters `state`; `reason` is what the ledger shows (null: nothing holds it), `cause` what governs it. */
  async enter(state: PartitionState, cause: string | null, reason: string | null): Promise<void> {
    const changed = state !== this.beat.state;
    this.beat = { ...this.beat, state };
    // a hold shows in the Web UI at once; writing and progress wait for the next tick
    if (changed && state !== PartitionState.Writing && this.beats) heartbeat(this.beat);
    await this.showHoldReason(reason);
    if (REPORTED_PARTITION_STATES.includes(state)) this.reporter.set(state, cause, reason);
  }

  /** Writing while slowed: the heartbeat says so, the ledger and the run keep showing why it is slow. */
  writingWhileSlowed(): void {
    this.beat = { ...this.beat, state: PartitionState.Writing };
  }

  /** The ledger's hold_reason alone, written only on change: clearing it must not cost a round trip per chunk. */
  async showHoldReason(reason: string | null): Promise<void> {
    if (reason === this.holdReason) return;
    await setHoldReason(this.pool, this.ids.runId, this.ids.partitionId, reason);
    this.holdReason = reason;
  }

  /** A chunk committed: the next heartbeat carries the new counts (the cursor stays in the ledger). */
  progressed(row: PartitionRow): void {
    this.beat = { ...this.beat, chunks: row.chunks, rowsWritten: Number(row.rows_written) };
  }

  async close(): Promise<void> {
    clearInterval(this.ticker);
    await this.reporter.close();
  }
}
