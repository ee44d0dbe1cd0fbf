/**
 * One attempt's walk through its partition (processPartition's loop). Between chunks it reads
 * the run's control row and the guards, asks the governor what to do (src/governor), and does
 * it: write a chunk, wait and say why, ask the run to pause, or stop. A local attempt hands
 * over before anything it would wait for, or once its budget has passed.
 */
import { Context, sleep } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import {
  afterBudget,
  afterChunk,
  afterLockTimeout,
  afterStatementTimeout,
  decide,
  initialGovernorState,
  timeoutFloor,
  type Decision,
  type GovernorInput,
} from '../governor';
import { finishPartition, partitionReport, type PartitionRow } from '../ledger/partitions';
import { refundRows, reserveRows } from '../ledger/rate-limits';
import { readRunControl, type RunControl } from '../ledger/run-control';
import { governing } from '../domain/guards';
import { flushesEveryChunk } from '../domain/limits';
import type { PartitionReport } from '../domain/types';
import { readGuards } from '../preflight/guard-signals';
import { runChunk } from './chunk';
import { INPUT_CHANGE_ACTOR, inputChangeHold } from './input-check';
import { chunkMetrics } from './chunk-metrics';
import type { Logger } from 'pino';
import { PartitionReporting } from './partition-reporting';
import type { RunContext } from './run-context';
import type pg from 'pg';

export interface LoopDeps {
  pool: pg.Pool;
  ctx: RunContext;
  log: Logger;
  activity: Context;
  reporting: PartitionReporting;
  pollMs: number;
  worker?: string;
  runId: string;
  partitionId: string;
  /** A local attempt: when it hands over to the activity (undefined: the activity itself). */
  localUntil?: number;
  /** The activity carrying on from a local attempt's handover. */
  continues?: boolean;
}

type WriteDecision = Extract<Decision, { kind: 'write' }>;
type WaitDecision = Extract<Decision, { kind: 'wait' }>;

/** One attempt's walk through its partition: the governor's decisions, each acted on, until the partition is no longer running. */
export class PartitionLoop {
  private governor = initialGovernorState();
  private inputsChecked: boolean;
  private chunksWritten = 0;
  private readonly metrics: ReturnType<typeof chunkMetrics>;

  constructor(
    private readonly d: LoopDeps,
    public row: PartitionRow,
  ) {
    this.metrics = chunkMetrics(d.activity, d.ctx.run);
    // carrying on from a local attempt that checked them moments ago, before its first chunk
    this.inputsChecked = d.continues === true;
  }

  /**
   * Walks until the partition finishes or is cancelled (undefined), or returns the report that
   * asks the run to pause, or a local attempt's handover.
   */
  async run(): Promise<PartitionReport | undefined> {
    const { activity, pool, runId, localUntil } = this.d;
    while (this.row.status === 'running') {
      if (activity.cancellationSignal.aborted) throw activity.cancellationSignal.reason ?? new CancelledFailure('activity cancelled');
      // a local attempt writes a chunk at least: it has paid for the attempt's start already
      if (localUntil !== undefined && this.chunksWritten > 0 && Date.now() >= localUntil) return this.handOver('its time as a local attempt is up');
      const control = await readRunControl(pool, runId);
      this.metrics.paused(control.paused);
      const held = await this.inputChanged(control);
      if (held) return held;
      const decision = await this.decide(control);
      switch (decision.kind) {
        case 'stop':
          this.row = await finishPartition(pool, runId, this.d.partitionId, 'cancelled');
          this.d.log.info('partition cancelled at a chunk boundary');
          return undefined;
        case 'pause-run':
          // long enough that an operator should look: the partition workflow asks the run to pause
          this.d.log.warn({ guard: decision.actor, reason: decision.reason }, 'guard hold timed out; asking the run to pause');
          return this.askRunToPause(decision.actor, decision.reason, control.version);
        case 'wait':
          if (localUntil !== undefined) return this.handOver(`it waits: ${decision.reason ?? decision.state}`);
          await this.wait(decision);
          break;
        case 'write': {
          // any wait before the write (a guard's pace, the rows/s budget) is the activity's, which heartbeats through it
          if (localUntil !== undefined && (decision.before || control.limits.rowsPerSecond)) return this.handOver('its writes are paced');
          const paused = await this.write(decision, control);
          if (paused) return paused;
          break;
        }
        case 'measure':
          throw new Error('the governor asked for guard readings twice'); // unreachable: decide() gave it one
        default:
          return unreachable(decision);
      }
    }
    return undefined;
  }

  /** Before the partition's first chunk and after every pause: what the transform reads must be what the run accepted. */
  private async inputChanged(control: RunControl): Promise<PartitionReport | undefined> {
    if (control.paused) this.inputsChecked = false;
    if (this.inputsChecked || control.paused || control.cancelRequested) return undefined;
    const hold = await inputChangeHold(this.d.pool, this.d.ctx.run);
    if (hold) {
      this.d.log.warn({ reason: hold }, 'an input of the transform changed; asking the run to pause');
      return this.askRunToPause(INPUT_CHANGE_ACTOR, hold, control.version);
    }
    this.inputsChecked = true;
    return undefined;
  }

  private async decide(control: RunControl): Promise<Decision> {
    const facts: GovernorInput = { control, now: Date.now(), pollMs: this.d.pollMs };
    let step = decide(this.governor, facts);
    if (step.decision.kind === 'measure') {
      const reading = governing(await readGuards(this.d.pool, control.limits.guards!, this.d.ctx.spec.target.table)) ?? null;
      step = decide(this.governor, { ...facts, reading });
    }
    this.governor = step.state;
    return step.decision;
  }

  /** A local attempt stops here, its last chunk committed: the partition's activity carries on. */
  private handOver(why: string): PartitionReport {
    this.d.log.info({ why }, 'local attempt hands the partition to its activity');
    return { ...partitionReport(this.row), handedOver: true };
  }

  private async wait(d: WaitDecision): Promise<void> {
    await this.d.reporting.enter(d.state, d.cause, d.reason);
    if (d.ms > 0) await sleep(d.ms);
  }

  private async askRunToPause(actor: string, reason: string, basedOnVersion: number, row = this.row): Promise<PartitionReport> {
    await this.d.reporting.showHoldReason(reason);
    return { ...partitionReport(row), pauseRequest: { actor, reason, basedOnVersion } };
  }

  /** One chunk, paced by the run's rows/s budget; what became of it is acted on here. */
  private async write(decision: WriteDecision, control: RunControl): Promise<PartitionReport | undefined> {
    const { pool, runId, partitionId, log } = this.d;
    if (decision.before) await this.wait(decision.before);
    let write = decision;
    const { rowsPerSecond } = control.limits;
    if (rowsPerSecond) {
      // one budget for the whole run, across workers: reserve this chunk's rows, wait out any debt
      const budgeted = afterBudget(write, await reserveRows(pool, runId, write.chunkSize, rowsPerSecond), decision.before?.reason ?? null);
      write = budgeted.write;
      if (budgeted.wait) await this.wait(budgeted.wait);
    }
    if (write.oneWriter) this.d.reporting.writingWhileSlowed();
    else await this.d.reporting.enter('writing', null, null);

    const started = Date.now();
    const outcome = await runChunk(pool, this.d.ctx, {
      runId,
      partitionId,
      chunkSize: write.chunkSize,
      oneWriter: write.oneWriter,
      record: write.record,
      failOnTimeout: write.chunkSize <= timeoutFloor(control.limits),
      flushEveryChunk: flushesEveryChunk(control.limits),
      worker: this.d.worker,
    });
    // a rolled-back chunk read nothing the budget should count: all of its rows go back
    if (rowsPerSecond) await refundRows(pool, runId, write.chunkSize - (outcome.kind === 'committed' ? outcome.rowsRead : 0));
    const sized = { chunkSize: write.chunkSize, limits: control.limits };
    switch (outcome.kind) {
      case 'committed': {
        const ms = Date.now() - started - outcome.turnMs;
        this.governor = afterChunk(this.governor, { ...sized, ms });
        this.metrics.committed(outcome, ms);
        this.chunksWritten++;
        this.row = outcome.row;
        this.d.reporting.progressed(this.row);
        return undefined;
      }
      case 'lock-timeout':
        await this.wait(afterLockTimeout(outcome.cause, this.d.pollMs));
        return undefined;
      case 'statement-timeout':
        this.governor = afterStatementTimeout(this.governor, sized);
        log.warn(
          { chunkSize: write.chunkSize, next: this.governor.timeoutCap, cause: outcome.cause },
          'chunk hit the statement timeout; trying smaller chunks',
        );
        return undefined;
      case 'concurrent-change':
        if (outcome.ownRow) {
          // the partition was cut (limits.splitTail) or another attempt wrote a chunk: nobody to give way to
          log.info({ cause: outcome.cause }, "the partition's ledger row changed before the chunk read anything; computing it again");
          return undefined;
        }
        // nothing was written: the chunk is computed again, from the state the application left
        log.info({ cause: outcome.cause }, 'chunk met a concurrent change; computing it again');
        await sleep(Math.min(this.d.pollMs, 200));
        return undefined;
      case 'pause-run':
        log.error({ reason: outcome.cause }, 'the database cannot write; asking the run to pause');
        return this.askRunToPause('backfill', outcome.cause, control.version, outcome.row);
      default:
        return unreachable(outcome);
    }
  }
}

function unreachable(value: never): never {
  throw new Error(`a case this loop does not know: ${JSON.stringify(value)}`);
}
