/**
 * Tells the run workflow when a partition starts or stops being slowed or held, so the
 * `progress` query and the Web UI's current details can say why a run is slow.
 *
 * Every report is a signal, i.e. events in the run's history, so a report goes out only
 * when the partition's state or its cause changes (a guard's value moving does not count),
 * and at most once per interval per partition; a state that flips faster is reported as it
 * stands when the interval has passed. A report that cannot be delivered is logged and
 * dropped: this is a view for operators, the ledger's hold_reason stays the record.
 */
import type { Logger } from 'pino';
import type { PartitionCondition, PartitionState } from '../domain/types';

type State = PartitionState;

export interface ConditionReporterOptions {
  /** The run may show a condition an earlier attempt reported (the ledger held a reason): report even 'writing'. */
  stale: boolean;
  minIntervalMs?: number;
  now?: () => number;
}

export class ConditionReporter {
  private shown: { state: State; cause: string | null } | undefined;
  private latest: { state: State; cause: string | null; condition: PartitionCondition } | undefined;
  private lastSentAt = -Infinity;
  private sending: Promise<void> | undefined;
  private readonly minIntervalMs: number;
  private readonly now: () => number;

  constructor(
    private readonly partitionId: string,
    private readonly send: (condition: PartitionCondition) => Promise<void>,
    private readonly log: Logger,
    options: ConditionReporterOptions,
  ) {
    this.shown = options.stale ? undefined : { state: 'writing', cause: null };
    this.minIntervalMs = options.minIntervalMs ?? 5000;
    this.now = options.now ?? Date.now;
  }

  /** The partition's state as of now; `cause` names what governs it ('guard:probeMs', 'window', 'lock'). */
  set(state: State, cause: string | null, reason: string | null): void {
    if (this.latest && this.latest.state === state && this.latest.cause === cause) return;
    this.latest = { state, cause, condition: { partitionId: this.partitionId, state, reason, since: new Date(this.now()).toISOString() } };
    this.flush();
  }

  /** Sends the latest state if it differs from what the run shows and the interval has passed; call it on a timer too. */
  flush(): void {
    const latest = this.latest;
    if (!latest || this.sending || this.now() - this.lastSentAt < this.minIntervalMs) return;
    if (this.shown && this.shown.state === latest.state && this.shown.cause === latest.cause) return;
    this.lastSentAt = this.now();
    this.sending = this.send(latest.condition)
      .then(() => {
        this.shown = { state: latest.state, cause: latest.cause };
      })
      .catch((err: Error) => this.log.warn({ error: err.message }, "could not tell the run about this partition's condition"))
      .finally(() => {
        this.sending = undefined;
      });
  }

  /** Waits for a report in flight; a pending one is dropped (the partition is finishing or handing over). */
  async close(): Promise<void> {
    await this.sending;
  }
}
