/**
 * The programmatic API: what the `backfill` command does, as typed functions a program can
 * call — plan, start, status, pause, resume, cancel, report, revert, and a run's events. The
 * CLI's commands are built on it. One `Backfill` is bound to one ledger database (the
 * environment variable that holds its URL, as `--database` names it) and connects to Temporal
 * on first need; `close()` ends both.
 */
import type { Client } from '@temporalio/client';
import type pg from 'pg';
import type { RunRow } from '../ledger/runs';
import { defaultActor } from '../operations/actor';
import { controlRun, endedWorkflow, type ControlAction } from '../operations/control';
import { runWorkerGap } from '../operations/database-workers';
import { ACTIVE_RUN_STATUSES } from '../domain/statuses';
import { findRun, openLedgerPool } from '../operations/ledger-access';
import { planSpec, type PlanOptions, type SpecPlan } from '../operations/plan-spec';
import { revertRun } from '../undo/revert-run';
import { previewRevert, type RevertPreview } from '../undo/revert-preview';
import { waitForResult } from '../operations/run-workflow';
import { startRun, type StartedRun } from '../operations/start-run';
import { listRunSummaries, statusReport, type StatusReport } from '../operations/status';
import { collectReport, type ReportData } from '../report/collect';
import { renderHtml } from '../report/html';
import { renderMarkdown } from '../report/markdown';
import type { OperatorAction } from '../domain/types';
import { temporalConfig, webUiUrl, type TemporalConfig } from '../temporal/config';
import { connectClient } from '../temporal/connect';
import type { RunResult } from '../workflows/run/input';
import { runEvents, type RunEvent, type RunEventOptions } from './run-events';
import { fleetCalls, operatorOf, type BackfillFleets } from './fleet-api';
import type { SubsetRequest } from '../compiler/subset';

export interface BackfillOptions {
  /** The environment variable holding the ledger database's URL (default DATABASE_URL): where runs are looked up. */
  database?: string;
  /** Temporal's address, namespace and task queue; default from the environment (TEMPORAL_ADDRESS, …), as the CLI reads them. */
  temporal?: Partial<TemporalConfig>;
}

/** A run, by its run id or its workflow id (`backfill/<name>/<runId>`). */
export type RunRef = string;

export interface StartOptions {
  runId?: string;
  /** Who starts it, for the audit record (default: the OS user). */
  actor?: string;
  /** Start only if the spec still makes this saved plan (`plan({ save })`), approved by `approvedBy`. */
  approval?: { planFile: string; approvedBy: string };
  /** Only the partitions that are stale (written by another transform version). */
  onlyStale?: boolean;
  /** Only these partitions of the plan: named, or those meeting [from, to) on the partition column (docs/operating.md "Run part of the plan"). */
  subset?: SubsetRequest;
}

/** A run that has started: its ids, its plan's size, the plan's warnings and its Web UI page. */
export interface Started {
  runId: string;
  workflowId: string;
  name: string;
  partitions: number;
  warnings: string[];
  webUi: string;
  /** Resolves when the run's workflow ends. */
  result(): Promise<RunResult>;
}

export interface ControlOutcome {
  runId: string;
  name: string;
  /** The workflow took the change (false: it was sent as a signal no worker has taken yet). */
  applied: boolean;
  /** The run's workflow had already ended: the ledger now says so. */
  workflowEnded?: { status: string; why: string };
}

export interface RevertOptions {
  /** Why it is undone: kept in the audit record of both runs. Required. */
  reason: string;
  actor?: string;
  /** Only these partitions of the run (default: every partition it wrote). */
  partitions?: string[];
  runId?: string;
  /** Asked once the revert is known to be possible, before anything is done; throw to stop it. */
  confirm?: (what: { partitions: number }) => Promise<void>;
}

export interface Backfill extends BackfillFleets {
  /** Checks a spec against its database and plans it; writes nothing there (with `measureGuards`, only the commitMs probe's row in the ledger). */
  plan(specFile: string, options?: PlanOptions): Promise<SpecPlan>;
  /** Checks, plans and starts a durable run; returns once a worker has registered it. */
  start(specFile: string, options?: StartOptions): Promise<Started>;
  /** The ledger's view of a run: counts, failures, gates, events, downstream. */
  status(run: RunRef): Promise<StatusReport>;
  /** Recent runs in this ledger. */
  list(): ReturnType<typeof listRunSummaries>;
  /** Chunks in flight commit; no new chunk starts until `resume`. */
  pause(run: RunRef, who?: Partial<OperatorAction>): Promise<ControlOutcome>;
  resume(run: RunRef, who?: Partial<OperatorAction> & { acceptInputChange?: boolean }): Promise<ControlOutcome>;
  /** Partitions stop at their next chunk boundary; what was written stays. `confirm` is asked once the cancel is known to apply. */
  cancel(run: RunRef, who?: Partial<OperatorAction> & { confirm?: () => Promise<void> }): Promise<ControlOutcome>;
  /** A run's report for reviewers: its data, or rendered as Markdown or one HTML page. */
  report(run: RunRef): Promise<ReportData>;
  report(run: RunRef, as: 'markdown' | 'html'): Promise<string>;
  /** Undoes a run from its before-images where nobody changed the rows since (docs/undo.md). */
  revert(run: RunRef, options: RevertOptions): Promise<Started>;
  /** What `revert` would do now, per partition: rows it would put back, rows it would leave (changed since); writes nothing. */
  previewRevert(run: RunRef, options?: { partitions?: string[] }): Promise<RevertPreview>;
  /** The run's lifecycle as events, until it ends (`ended` is the last). */
  events(run: RunRef, options?: RunEventOptions): AsyncIterable<RunEvent>;
  /** Ends the ledger pool and the Temporal connection. */
  close(): Promise<void>;
}

export function openBackfill(options: BackfillOptions = {}): Backfill {
  return new BackfillClient(options.database ?? 'DATABASE_URL', options.temporal);
}

/**
 * Also what the CLI's commands hold: the ledger pool and run lookup are theirs to render with.
 * The pool, the Temporal settings and the connection are made on first use, so a command that
 * needs only one of them never fails for want of the other.
 */
export class BackfillClient implements Backfill {
  private ledger?: pg.Pool;
  private settings?: TemporalConfig;
  private temporal?: Promise<{ client: Client; close(): Promise<void> }>;
  private readonly fleets: BackfillFleets = fleetCalls(this);

  constructor(
    readonly databaseVar: string,
    private readonly temporalOverrides: Partial<TemporalConfig> = {},
  ) {}

  get pool(): pg.Pool {
    this.ledger ??= openLedgerPool(this.databaseVar);
    return this.ledger;
  }

  get config(): TemporalConfig {
    this.settings ??= { ...temporalConfig(), ...this.temporalOverrides };
    return this.settings;
  }

  /** A run of this ledger by run id or workflow id (a usage error naming where it looked, if unknown). Bound: it may be passed on. */
  readonly findRun = async (ref: RunRef): Promise<RunRow> => findRun(this.pool, ref, this.databaseVar);

  async client(): Promise<Client> {
    if (!this.temporal) {
      // a failed connection is forgotten, so the next call tries again
      this.temporal = connectClient(this.config);
      this.temporal.catch(() => (this.temporal = undefined));
    }
    return (await this.temporal).client;
  }

  plan(specFile: string, options?: PlanOptions): Promise<SpecPlan> {
    return planSpec(specFile, options);
  }

  async start(specFile: string, options: StartOptions = {}): Promise<Started> {
    const started = await startRun({ client: await this.client(), taskQueue: this.config.taskQueue }, { specFile, ...options });
    return this.started(started);
  }

  /** With Temporal's word on an active run (its workflow ended, no worker for its database), when Temporal answers within 2 s. */
  async status(ref: RunRef): Promise<StatusReport> {
    const run = await this.findRun(ref);
    const report = { ...(await statusReport(this.pool, run)), webUi: webUiUrl(this.config.address, this.config.namespace, run.workflow_id) };
    return ACTIVE_RUN_STATUSES.includes(run.status) ? { ...report, ...(await this.askTemporal(run)) } : report;
  }

  async list(): ReturnType<typeof listRunSummaries> {
    return listRunSummaries(this.pool);
  }

  pause(ref: RunRef, who?: Partial<OperatorAction>): Promise<ControlOutcome> {
    return this.control('pause', ref, who);
  }

  resume(ref: RunRef, who?: Partial<OperatorAction> & { acceptInputChange?: boolean }): Promise<ControlOutcome> {
    return this.control('resume', ref, who, { acceptInputChange: who?.acceptInputChange });
  }

  cancel(ref: RunRef, who?: Partial<OperatorAction> & { confirm?: () => Promise<void> }): Promise<ControlOutcome> {
    return this.control('cancel', ref, who, { confirm: who?.confirm });
  }

  report(ref: RunRef): Promise<ReportData>;
  report(ref: RunRef, as: 'markdown' | 'html'): Promise<string>;
  async report(ref: RunRef, as?: 'markdown' | 'html'): Promise<ReportData | string> {
    const data = await collectReport(this.pool, await this.findRun(ref));
    if (!as) return data;
    return as === 'html' ? renderHtml(data) : renderMarkdown(data);
  }

  async revert(ref: RunRef, options: RevertOptions): Promise<Started> {
    const original = await this.findRun(ref);
    const started = await revertRun({ client: await this.client(), pool: this.pool, taskQueue: this.config.taskQueue }, original, {
      ...options,
      actor: options.actor ?? defaultActor(),
    });
    return this.started(started);
  }

  async previewRevert(ref: RunRef, options: { partitions?: string[] } = {}): Promise<RevertPreview> {
    return previewRevert(this.pool, await this.findRun(ref), options.partitions);
  }

  async *events(ref: RunRef, options?: RunEventOptions): AsyncIterable<RunEvent> {
    const run = await this.findRun(ref);
    yield* runEvents(this.pool, run.run_id, options);
  }

  async close(): Promise<void> {
    const [ledger, temporal] = [this.ledger, this.temporal];
    this.ledger = this.temporal = undefined;
    await Promise.all([
      ledger?.end(),
      temporal?.then(
        (t) => t.close(),
        () => undefined,
      ),
    ]);
  }

  /**
   * An active run whose workflow has ended is stuck for good, and one whose database no worker
   * serves waits: the ledger can know neither. Temporal is asked briefly; unreachable, both are
   * left out, for status is the ledger's view.
   */
  private async askTemporal(run: RunRow): Promise<Pick<StatusReport, 'workflowEnded' | 'waitingForWorker'>> {
    const connected = await connectClient(this.config, { connectTimeout: '2s' }).catch(() => undefined);
    if (!connected) return {};
    try {
      const ended = await endedWorkflow(connected.client, run);
      if (ended) return { workflowEnded: ended };
      const gap = await runWorkerGap(connected.client.workflow, run.workflow_id).catch(() => undefined);
      return gap ? { waitingForWorker: gap } : {};
    } finally {
      await connected.close();
    }
  }

  private async control(
    action: ControlAction,
    ref: RunRef,
    who: Partial<OperatorAction> = {},
    options: { acceptInputChange?: boolean; confirm?: () => Promise<void> } = {},
  ): Promise<ControlOutcome> {
    const run = await this.findRun(ref);
    const { applied, ended } = await controlRun({ client: await this.client(), pool: this.pool }, run, action, operatorOf(who), undefined, options);
    return { runId: run.run_id, name: run.name, applied, ...(ended ? { workflowEnded: ended } : {}) };
  }

  startFleet: BackfillFleets['startFleet'] = (...args) => this.fleets.startFleet(...args);
  fleetStatus: BackfillFleets['fleetStatus'] = (...args) => this.fleets.fleetStatus(...args);
  controlFleet: BackfillFleets['controlFleet'] = (...args) => this.fleets.controlFleet(...args);
  retryFleet: BackfillFleets['retryFleet'] = (...args) => this.fleets.retryFleet(...args);
  verifyFleet: BackfillFleets['verifyFleet'] = (...args) => this.fleets.verifyFleet(...args);
  revertFleet: BackfillFleets['revertFleet'] = (...args) => this.fleets.revertFleet(...args);

  private started(s: StartedRun): Started {
    const { handle, ...ids } = s;
    return { ...ids, webUi: webUiUrl(this.config.address, this.config.namespace, s.workflowId), result: () => waitForResult(handle) };
  }
}
