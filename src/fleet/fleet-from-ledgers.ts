/**
 * A fleet read back from its members' ledgers, for when Temporal no longer knows it (past its
 * namespace's retention, or asked of another namespace). Every member's ledger keeps the fleet's
 * record — its members and waves, who started it and why, those excluded — so one member's
 * ledger names the others, and each member's own ledger gives its run, as `status` shows it.
 * What only the fleet's workflow knew (a fleet-level pause, its events) is not there, and the
 * report says so. Reads; writes nothing.
 */
import { UsageError } from '../domain/usage-error';
import { createPool } from '../db/pool';
import { fleetRuns, getFleet, type FleetRow } from '../ledger/fleets';
import { ledgerExists } from '../ledger/runs';
import { inParallel } from '../util/in-parallel';
import type { FleetStatus, MemberStatus } from '../workflows/fleet/input';
import { fleetTotals, memberRun, type FleetMemberStatus, type FleetStatusReport } from './fleet-status-report';

type Env = Record<string, string | undefined>;

/** Ledgers read at once, each with a connection of its own. */
const AT_ONCE = 8;

/** `ref` is a fleet id or its workflow id; `ledgerVariable` names the database whose ledger is read first (`--database`). */
export async function fleetStatusFromLedgers(ref: string, ledgerVariable: string, env: Env = process.env): Promise<FleetStatusReport> {
  const fleetId = ref.startsWith('backfill/') ? (ref.split('/')[2] ?? ref) : ref;
  const record = await fleetRecord(fleetId, ledgerVariable, env);
  const members = await inParallel(record.members, AT_ONCE, (m) => memberFromLedger(fleetId, m, env));
  const approvals = new Map<number, string>();
  for (const m of members) if (m.waveApprovedBy) approvals.set(m.status.wave, m.waveApprovedBy);
  const statuses = members.map((m) => m.status);
  const started = statuses.filter((m) => m.status !== 'not-started');
  return {
    fleetId,
    name: record.name,
    reason: record.reason,
    workflowId: record.workflow_id,
    status: statusOf(statuses),
    startedBy: record.started_by,
    wave: Math.max(0, ...started.map((m) => m.wave)),
    waves: record.waves,
    concurrency: record.concurrency,
    onError: record.on_error,
    approvals: [...approvals].sort(([a], [b]) => a - b).map(([wave, actor]) => ({ wave, actor })),
    excluded: record.excluded,
    members: statuses,
    totals: fleetTotals(statuses),
    events: [],
    readFrom: 'ledgers',
    ...(record.approved_by ? { approvedBy: record.approved_by } : {}),
  };
}

async function fleetRecord(fleetId: string, variable: string, env: Env): Promise<FleetRow> {
  const unknown = `Temporal knows no fleet ${fleetId} in this namespace (past its retention, or another namespace)`;
  const url = env[variable];
  if (!url)
    throw new UsageError(
      `${unknown}, and ${variable} is not set here: every member's ledger keeps the fleet's record, so name a member's variable with --database VAR`,
    );
  const pool = createPool(url, { max: 1, applicationName: 'backfill-cli' });
  try {
    const row = (await ledgerExists(pool)) ? await getFleet(pool, fleetId) : undefined;
    if (!row)
      throw new UsageError(
        `${unknown}, and the ledger in ${variable} holds no record of it: every member's ledger keeps the fleet's record, so name a member's variable with --database VAR (docs/fleets.md)`,
      );
    return row;
  } finally {
    await pool.end();
  }
}

async function memberFromLedger(
  fleetId: string,
  member: { variable: string; wave: number },
  env: Env,
): Promise<{ status: FleetMemberStatus; waveApprovedBy?: string }> {
  const base = { variable: member.variable, wave: member.wave, runId: '', workflowId: '' };
  const url = env[member.variable];
  if (!url) return { status: { ...base, status: 'not-started', unread: `${member.variable} is not set here` } };
  const pool = createPool(url, { max: 1, applicationName: 'backfill-cli' });
  let runs;
  try {
    runs = (await ledgerExists(pool)) ? await fleetRuns(pool, fleetId) : [];
  } catch (err) {
    return {
      status: {
        ...base,
        status: 'not-started',
        unreachable: true,
        unread: `${member.variable}'s database cannot be reached from here (${(err as Error).message})`,
      },
    };
  } finally {
    await pool.end();
  }
  // its own run (a retry of the fleet is a later attempt of the same run); a revert of it is another run
  const own = runs.find((r) => r.fleet_member === member.variable && r.reverts === null);
  if (!own) return { status: { ...base, status: 'not-started' } };
  const run = await memberRun(member.variable, own.run_id, env);
  const status: FleetMemberStatus = { ...base, runId: own.run_id, status: memberStatus(own.status), ...run };
  return { status, ...(own.wave_approved_by ? { waveApprovedBy: own.wave_approved_by } : {}) };
}

/** A run the ledger still shows active had its workflow end under it (terminated, or the fleet's history is gone): not finished. */
function memberStatus(runStatus: string): MemberStatus {
  if (runStatus === 'succeeded' || runStatus === 'failed' || runStatus === 'cancelled') return runStatus;
  return 'running';
}

/** The fleet's end as its members' runs show it: a member failed; stopped before all ran; all succeeded; or, a ledger unread, not known. */
function statusOf(members: FleetMemberStatus[]): FleetStatus | 'unknown' {
  if (members.some((m) => m.status === 'failed')) return 'failed';
  if (members.some((m) => m.status === 'running')) return 'running';
  if (members.some((m) => m.unread)) return 'unknown';
  if (members.some((m) => m.status === 'cancelled' || m.status === 'not-started')) return 'cancelled';
  return 'succeeded';
}
