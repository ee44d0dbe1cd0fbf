/**
 * `status` of a fleet: the fleet workflow's word on every member (wave, status, why it stopped)
 * and, for each member whose variable is set here, its own ledger's status — rows, rate, ETA,
 * what holds it, its failures — exactly as `status` shows a single run; a member that no worker
 * serves is said to wait for one. Totals over the members. Reads; writes nothing.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowFailedError } from '@temporalio/client';
import type { WorkerGap } from '../domain/types';
import { UsageError } from '../domain/usage-error';
import { createPool } from '../db/pool';
import { getRun, ledgerExists } from '../ledger/runs';
import { runWorkerGap } from '../operations/database-workers';
import { statusReport, type StatusReport } from '../operations/status';
import { inParallel } from '../util/in-parallel';
import type { FleetResult, FleetStatus, MemberStatus } from '../workflows/fleet/input';
import { fleetProgressQuery, type FleetProgress } from '../workflows/fleet/messages';
import { BackfillName, BackfillRunId, BackfillStatus } from '../workflows/search-attributes';
import type { FleetEvent } from '../workflows/fleet/fleet-state';

export interface FleetMemberStatus {
  variable: string;
  wave: number;
  runId: string;
  workflowId: string;
  /** The fleet's view: waiting for its wave, running, finished, or never started. */
  status: MemberStatus;
  /** Why it failed without a run (refused at registration, say). */
  error?: string;
  /** Its ledger's status, when its variable is set here and its run registered. */
  run?: Pick<StatusReport, 'status' | 'paused' | 'totals' | 'eta' | 'holding' | 'failures' | 'lastError' | 'canaryHold'>;
  /** Set while no worker serves its database: its run waits for one. */
  waitingForWorker?: WorkerGap;
  /** Set when its ledger could not be read from here (variable unset, database unreachable). */
  unread?: string;
  /** Its database did not answer: its run holds (its activities retry) until it does. */
  unreachable?: true;
}

export interface FleetStatusReport {
  fleetId: string;
  name: string;
  reason: string;
  workflowId: string;
  status: FleetStatus;
  startedBy: string;
  wave: number;
  waves: number;
  concurrency: number;
  onError: 'stop' | 'continue';
  awaitingApproval?: number;
  paused?: { actor: string; reason?: string };
  cancelRequested?: { actor: string; reason?: string };
  stopping?: string;
  approvals: { wave: number; actor: string; reason?: string }[];
  excluded: { variable: string; reason: string }[];
  members: FleetMemberStatus[];
  totals: {
    members: number;
    byStatus: Record<MemberStatus, number>;
    rowsRead: number;
    rowsWritten: number;
    partitions: number;
    partitionsDone: number;
    rowsPerSecond: number;
  };
  events: FleetEvent[];
  webUi?: string;
}

/** Ledgers read at once, each with a connection of its own. */
const AT_ONCE = 8;

export async function fleetStatus(client: Client, ref: string, env: Record<string, string | undefined> = process.env): Promise<FleetStatusReport> {
  const handle = await findFleet(client, ref);
  const progress = await fleetProgressOf(handle);
  const { record, state } = progress;
  const members = await inParallel(state.members, AT_ONCE, async (m): Promise<FleetMemberStatus> => {
    const base: FleetMemberStatus = {
      variable: m.variable,
      wave: m.wave,
      runId: m.runId,
      workflowId: m.workflowId,
      status: m.status,
      ...(m.error ? { error: m.error } : {}),
    };
    if (m.status === 'waiting' || m.status === 'not-started') return base;
    const [run, gap] = await Promise.all([
      memberRun(m.variable, m.runId, env),
      m.status === 'running' ? runWorkerGap(client.workflow, m.workflowId).catch(() => undefined) : undefined,
    ]);
    return { ...base, ...run, ...(gap ? { waitingForWorker: gap } : {}) };
  });
  const byStatus: Record<MemberStatus, number> = { waiting: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0, 'not-started': 0 };
  for (const m of members) byStatus[m.status]++;
  const sum = (f: (m: FleetMemberStatus) => number) => members.reduce((n, m) => n + f(m), 0);
  return {
    fleetId: record.fleetId,
    name: record.name,
    reason: record.reason,
    workflowId: record.workflowId,
    status: progress.status,
    startedBy: record.startedBy,
    wave: state.wave,
    waves: state.waves,
    concurrency: state.concurrency,
    onError: state.onError,
    ...(state.awaitingApproval !== undefined ? { awaitingApproval: state.awaitingApproval } : {}),
    ...(state.paused ? { paused: state.paused } : {}),
    ...(state.cancelRequested ? { cancelRequested: state.cancelRequested } : {}),
    ...(state.stopping ? { stopping: state.stopping } : {}),
    approvals: Object.entries(state.approvals).map(([wave, who]) => ({ wave: Number(wave), ...who })),
    excluded: record.excluded,
    members,
    totals: {
      members: members.length,
      byStatus,
      rowsRead: sum((m) => m.run?.totals.rowsRead ?? 0),
      rowsWritten: sum((m) => m.run?.totals.rowsWritten ?? 0),
      partitions: sum((m) => m.run?.totals.total ?? 0),
      partitionsDone: sum((m) => (m.run ? m.run.totals.byStatus.succeeded + m.run.totals.byStatus.failed + m.run.totals.byStatus.cancelled : 0)),
      rowsPerSecond: sum((m) => m.run?.eta?.rowsPerSecond ?? 0),
    },
    events: state.events,
  };
}

/** The fleet's workflow, by fleet id (`fleet-…`) or workflow id (`backfill/<name>/fleet-…`). */
export async function findFleet(client: Client, ref: string): Promise<WorkflowHandle> {
  if (ref.startsWith('backfill/')) return client.workflow.getHandle(ref);
  for await (const w of client.workflow.list({ query: `BackfillRunId = '${ref.replace(/'/g, '')}' AND WorkflowType = 'backfillFleetWorkflow'` }))
    return client.workflow.getHandle(w.workflowId);
  throw new UsageError(`unknown fleet ${ref}: Temporal knows no fleet workflow with that id in this namespace (list fleets with: backfill list)`);
}

/** Its own word (a query, answered from its history even once it has closed, by any worker). */
async function fleetProgressOf(handle: WorkflowHandle): Promise<FleetProgress> {
  try {
    return await handle.query(fleetProgressQuery);
  } catch (err) {
    const result = await handle
      .result()
      .catch((e: unknown) => (e instanceof WorkflowFailedError ? ((e.cause as { details?: unknown[] })?.details?.[0] as FleetResult | undefined) : undefined));
    if (!result) throw err;
    throw new UsageError(`fleet ${handle.workflowId} finished ${result.status}, but no worker answered for its details (start one: backfill worker)`);
  }
}

async function memberRun(variable: string, runId: string, env: Record<string, string | undefined>): Promise<Partial<FleetMemberStatus>> {
  const url = env[variable];
  if (!url) return { unread: `${variable} is not set here` };
  const pool = createPool(url, { max: 1, applicationName: 'backfill-cli' });
  try {
    if (!(await ledgerExists(pool))) return {};
    const row = await getRun(pool, runId);
    if (!row) return {};
    const r = await statusReport(pool, row);
    return {
      run: {
        status: r.status,
        paused: r.paused,
        totals: r.totals,
        eta: r.eta,
        holding: r.holding,
        failures: r.failures,
        lastError: r.lastError,
        ...(r.canaryHold ? { canaryHold: r.canaryHold } : {}),
      },
    };
  } catch (err) {
    // the member's run holds until it answers again (its activities retry); the fleet goes on
    return { unreachable: true, unread: `${variable}'s database cannot be reached from here (${(err as Error).message}); its run holds until it answers` };
  } finally {
    await pool.end();
  }
}

export interface FleetSummary {
  fleetId: string;
  name: string;
  workflowId: string;
  status: string;
  startedAt: string;
  closedAt: string | null;
}

/** Fleets in this Temporal namespace, newest first (Temporal's visibility: within its retention). */
export async function listFleets(client: Client, filter: { name?: string } = {}, limit = 50): Promise<FleetSummary[]> {
  const byName = filter.name ? ` AND BackfillName = '${filter.name.replace(/'/g, '')}'` : '';
  const found: FleetSummary[] = [];
  for await (const w of client.workflow.list({ query: `WorkflowType = 'backfillFleetWorkflow'${byName}`, pageSize: limit })) {
    const attrs = w.typedSearchAttributes;
    found.push({
      fleetId: attrs.get(BackfillRunId) ?? w.workflowId.split('/')[2],
      name: attrs.get(BackfillName) ?? w.workflowId.split('/')[1],
      workflowId: w.workflowId,
      status: attrs.get(BackfillStatus) ?? w.status.name.toLowerCase(),
      startedAt: w.startTime.toISOString(),
      closedAt: w.closeTime?.toISOString() ?? null,
    });
    if (found.length >= limit) break;
  }
  return found;
}
