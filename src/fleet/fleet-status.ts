/**
 * `status` of a fleet: the fleet workflow's word on every member (wave, status, why it stopped)
 * and, for each member whose variable is set here, its own ledger's status — rows, rate, ETA,
 * what holds it, its failures — exactly as `status` shows a single run; a member that no worker
 * serves is said to wait for one. Totals over the members. Reads; writes nothing.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { UsageError } from '../domain/usage-error';
import { runWorkerGap } from '../operations/database-workers';
import { inParallel } from '../util/in-parallel';
import type { FleetResult } from '../workflows/fleet/input';
import { fleetProgressQuery, type FleetProgress } from '../workflows/fleet/messages';
import { BackfillName, BackfillRunId, BackfillStatus } from '../workflows/search-attributes';
import { fleetStatusFromLedgers } from './fleet-from-ledgers';
import { fleetTotals, memberRun, type FleetMemberStatus, type FleetStatusReport } from './fleet-status-report';

export type { FleetMemberStatus, FleetStatusReport } from './fleet-status-report';

/** Ledgers read at once, each with a connection of its own. */
const AT_ONCE = 8;

/**
 * From the fleet's workflow and its members' ledgers; once Temporal no longer knows the fleet,
 * from the ledgers alone, starting with `ledgerVariable`'s (fleet-from-ledgers.ts).
 */
export async function fleetStatus(
  client: Client,
  ref: string,
  env: Record<string, string | undefined> = process.env,
  ledgerVariable?: string,
): Promise<FleetStatusReport> {
  const progress = await fleetProgressOf(client, ref);
  if (!progress) {
    if (ledgerVariable) return fleetStatusFromLedgers(ref, ledgerVariable, env);
    throw unknownFleet(ref);
  }
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
    totals: fleetTotals(members),
    events: state.events,
    ...(record.approvedBy ? { approvedBy: record.approvedBy } : {}),
  };
}

const unknownFleet = (ref: string) =>
  new UsageError(`unknown fleet ${ref}: Temporal knows no fleet workflow with that id in this namespace (list fleets with: backfill list --fleets)`);

/** The fleet's workflow, by fleet id (`fleet-…`) or workflow id (`backfill/<name>/fleet-…`). */
export async function findFleet(client: Client, ref: string): Promise<WorkflowHandle> {
  const handle = await lookUpFleet(client, ref);
  if (!handle) throw unknownFleet(ref);
  return handle;
}

/** Temporal's visibility lists a workflow a moment after its start: a fleet started just now is looked for again before it is unknown. */
const VISIBILITY_LOOKS = 10;
const VISIBILITY_PAUSE_MS = 300;

async function lookUpFleet(client: Client, ref: string): Promise<WorkflowHandle | undefined> {
  if (ref.startsWith('backfill/')) return client.workflow.getHandle(ref);
  const query = `BackfillRunId = '${ref.replace(/'/g, '')}' AND WorkflowType = 'backfillFleetWorkflow'`;
  for (let look = 1; ; look++) {
    for await (const w of client.workflow.list({ query })) return client.workflow.getHandle(w.workflowId);
    if (look >= VISIBILITY_LOOKS) return undefined;
    await new Promise((resolve) => setTimeout(resolve, VISIBILITY_PAUSE_MS));
  }
}

/** Its own word (a query, answered from its history even once it has closed, by any worker); undefined when Temporal knows no such fleet. */
async function fleetProgressOf(client: Client, ref: string): Promise<FleetProgress | undefined> {
  const handle = await lookUpFleet(client, ref);
  if (!handle) return undefined;
  try {
    return await handle.query(fleetProgressQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    const result = await handle
      .result()
      .catch((e: unknown) => (e instanceof WorkflowFailedError ? ((e.cause as { details?: unknown[] })?.details?.[0] as FleetResult | undefined) : undefined));
    if (!result) throw err;
    throw new UsageError(`fleet ${handle.workflowId} finished ${result.status}, but no worker answered for its details (start one: backfill worker)`);
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
