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
import { startFleet, type StartedFleet, type StartFleetOptions } from '../fleet/start-fleet';
import { fleetStatus, type FleetStatusReport } from '../fleet/fleet-status';
import { controlFleet, type FleetAction } from '../fleet/fleet-control';
import { waitForFleet } from '../fleet/fleet-result';
import { retryFleet, type FleetRetryStarted } from '../fleet/retry-fleet';
import { revertFleet, type FleetRevertOptions, type FleetRevertStarted } from '../fleet/revert-fleet';
import { verifyFleet, type FleetVerifyReport } from '../fleet/verify-fleet';
import type { FleetResult } from '../workflows/fleet/input';
import type { FleetControlOutcome } from '../workflows/fleet/messages';
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

/** A fleet that has started (docs/fleets.md): its id, its members' runs, its Web UI page. */
export interface StartedFleetInfo extends Omit<StartedFleet, 'handle'> {
  webUi: string;
  /** Resolves when the fleet's workflow ends, succeeded or not. */
  result(): Promise<FleetResult>;
}

export interface Backfill {
  /** Checks a spec against its database and plans it; writes nothing there. */
  plan(specFile: string, options?: PlanOptions): Promise<SpecPlan>;
  /** Checks, plans and starts a durable run; returns once a worker has registered it. */
  start(specFile: string, options?: StartOptions): Promise<Started>;
  /** A fleet spec (`databases:`): every member checked and planned, then one fleet run started; members wait for their wave. */
  startFleet(specFile: string, options?: Omit<StartFleetOptions, 'specFile'>): Promise<StartedFleetInfo>;
  /** A fleet's members (wave, status, rows, rate, ETA, what holds them) from the fleet workflow and the members' ledgers; once Temporal has forgotten it, from the ledgers, this one's first. */
  fleetStatus(fleet: string): Promise<FleetStatusReport>;
  /** Pause, resume or cancel a whole fleet, or approve its next wave; answered once the running members were told. */
  controlFleet(fleet: string, action: FleetAction, who?: Partial<OperatorAction>): Promise<FleetControlOutcome & { fleetId: string }>;
  /** The next attempt of a finished fleet: failed members retried (their failed partitions), members never started started, the rest kept. */
  retryFleet(fleet: string, who?: Partial<OperatorAction>): Promise<Omit<FleetRetryStarted, 'handle'> & { result(): Promise<FleetResult> }>;
  /** Every member's run (or `member`'s) verified as `verify` verifies a run, from its own database; clean only when all that ran are. */
  verifyFleet(fleet: string, options?: { member?: string }): Promise<FleetVerifyReport>;
  /** Every member of a finished fleet undone as `revert` undoes a run; all members checked before any starts. */
  revertFleet(fleet: string, options: Omit<FleetRevertOptions, 'actor'> & { actor?: string }): Promise<FleetRevertStarted>;
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
    const actor = { actor: who.actor ?? defaultActor(), ...(who.reason ? { reason: who.reason } : {}) };
    const { applied, ended } = await controlRun({ client: await this.client(), pool: this.pool }, run, action, actor, undefined, options);
    return { runId: run.run_id, name: run.name, applied, ...(ended ? { workflowEnded: ended } : {}) };
  }

  async startFleet(specFile: string, options: Omit<StartFleetOptions, 'specFile'> = {}): Promise<StartedFleetInfo> {
    const { handle, ...started } = await startFleet({ client: await this.client(), taskQueue: this.config.taskQueue }, { specFile, ...options });
    return { ...started, webUi: webUiUrl(this.config.address, this.config.namespace, started.workflowId), result: () => waitForFleet(handle) };
  }

  async fleetStatus(fleet: string): Promise<FleetStatusReport> {
    const report = await fleetStatus(await this.client(), fleet, process.env, this.databaseVar);
    return report.readFrom ? report : { ...report, webUi: webUiUrl(this.config.address, this.config.namespace, report.workflowId) };
  }

  async controlFleet(fleet: string, action: FleetAction, who: Partial<OperatorAction> = {}): Promise<FleetControlOutcome & { fleetId: string }> {
    return controlFleet(await this.client(), fleet, action, { actor: who.actor ?? defaultActor(), ...(who.reason ? { reason: who.reason } : {}) });
  }

  async retryFleet(fleet: string, who: Partial<OperatorAction> = {}): Promise<Omit<FleetRetryStarted, 'handle'> & { result(): Promise<FleetResult> }> {
    const actor = { actor: who.actor ?? defaultActor(), ...(who.reason ? { reason: who.reason } : {}) };
    const { handle, ...started } = await retryFleet({ client: await this.client(), taskQueue: this.config.taskQueue }, fleet, actor);
    return { ...started, result: () => waitForFleet(handle) };
  }

  async verifyFleet(fleet: string, options: { member?: string } = {}): Promise<FleetVerifyReport> {
    return verifyFleet(await this.client(), fleet, { ...options, ledgerVariable: this.databaseVar });
  }

  async revertFleet(fleet: string, options: Omit<FleetRevertOptions, 'actor'> & { actor?: string }): Promise<FleetRevertStarted> {
    return revertFleet({ client: await this.client(), taskQueue: this.config.taskQueue }, fleet, { ...options, actor: options.actor ?? defaultActor() });
  }

  private started(s: StartedRun): Started {
    const { handle, ...ids } = s;
    return { ...ids, webUi: webUiUrl(this.config.address, this.config.namespace, s.workflowId), result: () => waitForResult(handle) };
  }
}
