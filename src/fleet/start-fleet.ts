/**
 * Starting a fleet (docs/fleets.md): the fleet spec read once, every member checked and planned
 * as a single-database start checks it (plan-fleet.ts), a second active run of the spec on any
 * member refused, then one fleet workflow started. Nothing is written before every member has
 * passed; a member no worker serves yet is no refusal — its run waits for one, and status says so.
 */
import { type Client, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { databaseTaskQueue, RUN_ID_PATTERN, runWorkflowId } from '../domain/ids';
import { alreadyActiveMessage, targetBusyMessage } from '../domain/labels';
import { UsageError } from '../domain/usage-error';
import { createPool, databaseUrlFrom } from '../db/pool';
import { findActiveRun, findActiveRunOnTarget, ledgerExists, resolveRelation } from '../ledger/runs';
import { defaultActor } from '../operations/actor';
import { newRunId } from '../operations/run-id';
import { ensureSearchAttributes } from '../temporal/search-attributes';
import { canonicalJson } from '../util/canonical-json';
import { inParallel } from '../util/in-parallel';
import { memberRunInput, type FleetMemberPlan, type FleetRecord, type FleetWorkflowInput } from '../workflows/fleet/input';
import { BackfillName, BackfillRunId, BackfillStatus } from '../workflows/search-attributes';
import { loadFleetSpecFile, type LoadedFleet } from './load-fleet';
import { planLoadedFleet, type FleetPlan } from './plan-fleet';
import { fleetPlanDifferences, readSavedFleetPlan, savedFleetPlanOf, type SavedFleetPlan } from './fleet-saved-plan';

export interface StartFleetOptions {
  specFile: string;
  fleetId?: string;
  actor?: string;
  /** Members left out on purpose, and why (recorded in every member's ledger). */
  exclude?: string[];
  /** `--plan`: start only if the fleet still makes this saved fleet plan (plan --save); `approvedBy` is kept with every member's run. */
  approval?: { planFile: string; approvedBy: string };
  reason?: string;
  env?: Record<string, string | undefined>;
  /** Test knobs, passed on to every member run. */
  partitionHeartbeatTimeoutMs?: number;
  reconcileIntervalMs?: number;
}

export interface StartedFleet {
  fleetId: string;
  workflowId: string;
  name: string;
  waves: number;
  members: { variable: string; wave: number; runId: string; workflowId: string; partitions: number }[];
  excluded: { variable: string; reason: string }[];
  handle: WorkflowHandleWithFirstExecutionRunId;
}

/** Fleet ids read as such everywhere a run id is taken (`backfill status fleet-…`). */
export const FLEET_ID_PREFIX = 'fleet-';

export function isFleetRef(ref: string): boolean {
  return (ref.startsWith('backfill/') ? (ref.split('/')[2] ?? '') : ref).startsWith(FLEET_ID_PREFIX);
}

/** A fleet's input travels once in its start: kept under 1 MB, as a run's is. */
const MAX_FLEET_INPUT_BYTES = 1024 * 1024;
/**
 * Every member's run input is recorded in the fleet's history as it starts (and its result as it
 * ends): Temporal warns at 10 MB of history and stops a workflow at 50 MB. A fleet whose members'
 * inputs alone would pass this is refused, to be split.
 */
const MAX_FLEET_HISTORY_BYTES = 20 * 1024 * 1024;

function refuseIfTooLarge(specFile: string, input: FleetWorkflowInput): void {
  const start = Buffer.byteLength(JSON.stringify(input));
  if (start > MAX_FLEET_INPUT_BYTES)
    throw new UsageError(`${specFile}: the fleet's input would be ${(start / 1024 / 1024).toFixed(1)} MB, over 1 MB; split it into fleets of fewer members`);
  // a member's run input, and its result and the events around it (about 2 KB)
  const history = input.members.reduce((n, m) => n + Buffer.byteLength(JSON.stringify(memberRunInput(input, m))) + 2048, start);
  if (history > MAX_FLEET_HISTORY_BYTES)
    throw new UsageError(
      `${specFile}: the fleet's history would hold about ${(history / 1024 / 1024).toFixed(0)} MB for its ${input.members.length} members (each member's run input is recorded as it starts), ` +
        `over the ${MAX_FLEET_HISTORY_BYTES / 1024 / 1024} MB it may safely carry; split it into fleets of fewer members (a family of narrower prefix, or listed names)`,
    );
}

export async function startFleet(temporal: { client: Client; taskQueue: string }, options: StartFleetOptions): Promise<StartedFleet> {
  const fleetId = options.fleetId ?? `${FLEET_ID_PREFIX}${newRunId()}`;
  if (!RUN_ID_PATTERN.test(fleetId) || !fleetId.startsWith(FLEET_ID_PREFIX))
    throw new UsageError(`--run-id of a fleet must start with ${FLEET_ID_PREFIX} and match ${RUN_ID_PATTERN.source} (got "${fleetId}")`);
  const env = options.env ?? process.env;
  const approved = options.approval && readSavedFleetPlan(options.approval.planFile);
  if (options.approval && !options.approval.approvedBy.trim()) throw new UsageError('--approved-by must name who approved the plan');
  const loaded = loadFleetSpecFile(options.specFile, env);
  // an approved plan carries its exclusions and their reasons: the fleet starts as it was approved
  const exclude = options.exclude ?? approved?.excluded.map((e) => e.variable);
  const reason = options.reason ?? approved?.excluded[0]?.reason;
  const plan = await planLoadedFleet(loaded, { exclude, reason, env, keepSavedPlan: approved !== undefined });
  if (!plan.ok) throw new UsageError(refusal(options.specFile, plan));
  if (approved) refuseUnlessApprovedFleet(options.approval!.planFile, approved, plan);
  const planned = plan.members.filter((m) => !m.excluded);
  await inParallel(planned, 4, (m) => refuseIfBusy(loaded, m.variable, env));

  const stamp = fleetId.slice(FLEET_ID_PREFIX.length);
  const members: FleetMemberPlan[] = planned.map((m, i) => {
    const { loaded: spec } = loaded.members.find((x) => x.variable === m.variable)!;
    return {
      variable: m.variable,
      wave: m.wave,
      // a member's run id says its fleet; ids stay within RUN_ID_PATTERN for a thousand members
      runId: `${stamp}-m${i + 1}`,
      databaseIdentity: m.identity!,
      databaseQueue: databaseTaskQueue(temporal.taskQueue, m.variable, m.identity!),
      specHash: spec.specHash,
      limits: spec.spec.limits,
      ...(approved ? { approval: { plan: m.savedPlan!, approvedBy: options.approval!.approvedBy } } : {}),
    };
  });
  // waves renumbered over the members that run: an excluded wave is no wave
  const waveNumbers = [...new Set(members.map((m) => m.wave))].sort((a, b) => a - b);
  for (const m of members) m.wave = waveNumbers.indexOf(m.wave) + 1;
  const block = loaded.fleet.fleet;
  const record: FleetRecord = {
    fleetId,
    name: loaded.fleet.name,
    reason: loaded.fleet.reason,
    workflowId: runWorkflowId(loaded.fleet.name, fleetId),
    fleetHash: loaded.fleetHash,
    startedBy: options.actor ?? defaultActor(),
    waves: waveNumbers.length,
    concurrency: block?.concurrency ?? 1,
    onError: block?.onError ?? 'stop',
    approve: block?.approve ?? false,
    members: members.map((m) => ({ variable: m.variable, wave: m.wave })),
    excluded: plan.members.filter((m) => m.excluded).map((m) => ({ variable: m.variable, reason: m.excluded!.reason })),
    ...(approved ? { approvedBy: options.approval!.approvedBy } : {}),
  };
  const input: FleetWorkflowInput = {
    record,
    spec: loaded.members[0].loaded.spec,
    specFile: loaded.file,
    transform: loaded.transform,
    members,
    ...(options.partitionHeartbeatTimeoutMs !== undefined ? { partitionHeartbeatTimeoutMs: options.partitionHeartbeatTimeoutMs } : {}),
    ...(options.reconcileIntervalMs !== undefined ? { reconcileIntervalMs: options.reconcileIntervalMs } : {}),
  };
  sameSpecAsPlanned(input, loaded);
  refuseIfTooLarge(options.specFile, input);

  await ensureSearchAttributes(temporal.client);
  const handle = await temporal.client.workflow.start('backfillFleetWorkflow', {
    workflowId: record.workflowId,
    taskQueue: temporal.taskQueue,
    args: [input],
    typedSearchAttributes: [
      { key: BackfillName, value: record.name },
      { key: BackfillRunId, value: fleetId },
      { key: BackfillStatus, value: 'running' },
    ],
    memo: { fleet: true, members: members.map((m) => m.variable) },
    staticSummary: `fleet ${record.name}: ${record.reason} — ${members.length} member(s) in ${record.waves} wave(s)`.slice(0, 200),
    staticDetails: fleetDetails(record, plan),
  });
  return {
    fleetId,
    workflowId: record.workflowId,
    name: record.name,
    waves: record.waves,
    members: members.map((m) => ({
      variable: m.variable,
      wave: m.wave,
      runId: m.runId,
      workflowId: runWorkflowId(record.name, m.runId),
      partitions: planned.find((p) => p.variable === m.variable)!.partitions ?? 0,
    })),
    excluded: record.excluded,
    handle,
  };
}

function refuseUnlessApprovedFleet(file: string, approved: SavedFleetPlan, plan: FleetPlan): void {
  const differences = fleetPlanDifferences(approved, savedFleetPlanOf(plan, approved.planned.by));
  const excludedNow = plan.members.filter((m) => m.excluded).map((m) => m.variable);
  const excludedThen = approved.excluded.map((e) => e.variable);
  if (excludedNow.join() !== excludedThen.join())
    differences.push(`excluded now: ${excludedNow.join(', ') || 'none'}; approved: ${excludedThen.join(', ') || 'none'}`);
  if (differences.length === 0) return;
  throw new UsageError(
    [
      `${plan.name} is not the fleet plan approved in ${file} (made by ${approved.planned.by} at ${approved.planned.at}); nothing was started:`,
      ...differences.map((d) => `  - ${d}`),
      'Review the change, then make and approve a new plan: backfill plan <fleet spec> --save',
    ].join('\n'),
  );
}

function refusal(specFile: string, plan: FleetPlan): string {
  const lines = [`${specFile}: the fleet cannot start; every member must take the spec (or be left out with --exclude NAME --reason):`];
  for (const m of plan.members) for (const p of m.problems) lines.push(`  ${m.variable}: ${p.path ? `${p.path} ` : ''}${p.message}`);
  return lines.join('\n');
}

/** As a single start refuses: another active run of the spec, or on its target, in the member's database. */
async function refuseIfBusy(loaded: LoadedFleet, variable: string, env: Record<string, string | undefined>): Promise<void> {
  const member = loaded.members.find((m) => m.variable === variable)!;
  const pool = createPool(databaseUrlFrom(variable, env), { max: 1, applicationName: 'backfill-cli' });
  try {
    if (!(await ledgerExists(pool))) return;
    const active = await findActiveRun(pool, loaded.fleet.name);
    if (active)
      throw new UsageError(
        `${variable}: ${alreadyActiveMessage(loaded.fleet.name, { runId: active.run_id, status: active.status, startedBy: active.started_by, createdAt: active.created_at })}`,
      );
    const target = await resolveRelation(pool, member.spec.target.table);
    const busy = target && (await findActiveRunOnTarget(pool, target));
    if (busy) throw new UsageError(`${variable}: ${targetBusyMessage(target, { runId: busy.run_id, name: busy.name, status: busy.status })}`);
  } finally {
    await pool.end();
  }
}

/** The workflow rebuilds each member's spec from the shared one: it must be the spec that member was planned with. */
function sameSpecAsPlanned(input: FleetWorkflowInput, loaded: LoadedFleet): void {
  for (const m of input.members) {
    const built = memberRunInput(input, m).spec;
    const planned = loaded.members.find((x) => x.variable === m.variable)!.loaded.spec;
    if (canonicalJson(built) !== canonicalJson(planned))
      throw new Error(`the run of member ${m.variable} would not be the spec it was planned with; this is a bug in backfill: report it with the spec`);
  }
}

function fleetDetails(record: FleetRecord, plan: FleetPlan): string {
  const lines = [
    `**fleet ${record.name}** \`${record.fleetId}\` — ${record.reason}`,
    '',
    `- ${record.members.length} member(s) in ${record.waves} wave(s), ${record.concurrency} at once, onError ${record.onError}${record.approve ? ', a person approves each wave after the first' : ''}`,
    `- started by ${record.startedBy}; fleet spec hash \`${record.fleetHash.slice(0, 12)}\``,
    `- ${plan.totals.rows} rows in scope, ${plan.totals.partitions} partitions in all`,
    '',
    '| member | wave | database | partitions | rows |',
    '|---|---|---|---|---|',
    ...record.members.map((m) => {
      const p = plan.members.find((x) => x.variable === m.variable)!;
      return `| ${m.variable} | ${m.wave} | \`${p.identity}\` | ${p.partitions ?? ''} | ${p.rows ?? ''} |`;
    }),
  ];
  if (record.excluded.length > 0) lines.push('', ...record.excluded.map((e) => `- excluded ${e.variable}: ${e.reason}`));
  return lines.join('\n');
}
