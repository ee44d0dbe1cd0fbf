/** `backfill set-limits`: a running run's limits changed live, through the run's update; they take effect within one chunk. */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import { defaultActor } from '../../operations/actor';
import { setRunLimits } from '../../operations/control';
import { limitsChangeRefusal } from '../../operations/limits-change';
import { runLabel } from '../../domain/labels';
import { LIMIT_BOUNDS } from '../../domain/limits';
import type { GuardsSpec } from '../../domain/guards';
import type { LimitsChange } from '../../domain/types';
import type { AllowedWindow } from '../../domain/window';
import { actorOption, databaseOption, memberOption, outputOption, reasonOption, type ActorOptions } from '../options';
import { emit, UsageError } from '../output';
import { describeLimits } from '../render/status';
import { withBackfill, withLedgerAndTemporal } from '../with-backfill';
import { isFleetRef } from '../../fleet/start-fleet';
import { fleetMember } from '../../fleet/fleet-control';
import { findFleet } from '../../fleet/fleet-status';
import { fleetProgressQuery } from '../../workflows/fleet/messages';
import type { Limits } from '../../domain/types';

interface SetLimitsFlags extends ActorOptions {
  member?: string;
  concurrency?: string;
  chunkSize?: string;
  rowsPerSecond?: string;
  window?: string;
  targetChunkSeconds?: string;
  guards?: string;
}

function limitsChangeFromFlags(opts: SetLimitsFlags): LimitsChange {
  const number = (flag: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isFinite(n)) throw new UsageError(`${flag} must be a number (got "${value}")`);
    return n;
  };
  return {
    actor: opts.actor ?? defaultActor(),
    reason: opts.reason,
    concurrency: number('--concurrency', opts.concurrency),
    chunkSize: number('--chunk-size', opts.chunkSize),
    rowsPerSecond: opts.rowsPerSecond === 'off' ? null : number('--rows-per-second', opts.rowsPerSecond),
    window: opts.window === undefined ? undefined : parseWindowFlag(opts.window),
    targetChunkSeconds: opts.targetChunkSeconds === 'off' ? null : number('--target-chunk-seconds', opts.targetChunkSeconds),
    guards: opts.guards === undefined ? undefined : opts.guards === 'off' ? null : readGuardsFile(opts.guards),
  };
}

/**
 * `--guards guards.yaml`: the mapping a spec has under limits.guards, replacing the run's guards
 * whole. Its shape is checked by limitsChangeProblem (the spec's own schema), its SQL here.
 */
function readGuardsFile(file: string): GuardsSpec {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(
      `--guards ${file} cannot be read (${(err as Error).message}); give a YAML file with the guards as under limits.guards in a spec, or off`,
    );
  }
  let guards: unknown;
  try {
    guards = parseYaml(text);
  } catch (err) {
    throw new UsageError(`--guards ${file} is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (guards === null || typeof guards !== 'object' || Array.isArray(guards)) {
    throw new UsageError(`--guards ${file} must be a YAML mapping of guards, as under limits.guards in a spec (replicationLagSeconds, custom, …)`);
  }
  return guards as GuardsSpec;
}

async function setLimits(ref: string, opts: SetLimitsFlags): Promise<void> {
  const change = limitsChangeFromFlags(opts);
  const problem = await limitsChangeRefusal(change, `--guards ${opts.guards}`);
  if (problem) throw new UsageError(problem);
  if (isFleetRef(ref)) return setFleetLimits(ref, change, opts);
  if (opts.member) throw new UsageError(`--member names a member of a fleet; ${ref} is a run`);
  await withLedgerAndTemporal(opts.database, async ({ client, findRun }) => {
    const run = await findRun(ref);
    const limits = await setRunLimits({ client }, run, change);
    emit(opts, { runId: run.run_id, limits }, (r) => `Limits of ${runLabel(run.name, r.runId)}: ${describeLimits(r.limits)}.`);
  });
}

/**
 * A fleet: one member (`--member NAME`), or every member running now, each through its own run's
 * update. A member that starts later runs with its spec's limits (and its fleet.members override).
 */
async function setFleetLimits(ref: string, change: LimitsChange, opts: SetLimitsFlags): Promise<void> {
  const targets = await withBackfill('DATABASE_URL', async (backfill) => {
    const client = await backfill.client();
    if (opts.member) return [{ variable: opts.member, ...(await fleetMember(client, ref, opts.member)) }];
    const { state } = await (await findFleet(client, ref)).query(fleetProgressQuery);
    return state.members.filter((m) => m.status === 'running');
  });
  if (targets.length === 0) throw new UsageError(`fleet ${ref} has no running member; members that start later run with their spec's limits`);
  const changed: { member: string; runId: string; limits: Limits }[] = [];
  for (const t of targets) {
    await withLedgerAndTemporal(t.variable, async ({ client, findRun }) => {
      const run = await findRun(t.runId);
      changed.push({ member: t.variable, runId: run.run_id, limits: await setRunLimits({ client }, run, change) });
    });
  }
  emit(opts, { fleet: ref, members: changed }, (r) =>
    [
      ...r.members.map((m) => `${m.member} (run ${m.runId}): ${describeLimits(m.limits)}.`),
      ...(opts.member ? [] : ["Members that start later run with their spec's limits."]),
    ].join('\n'),
  );
}

/** `--window "22:00-06:00 Europe/Berlin"` (time zone optional, default UTC), or `off`. */
export function parseWindowFlag(value: string): AllowedWindow | null {
  if (value === 'off') return null;
  const m = /^\s*(\d\d:\d\d)\s*-\s*(\d\d:\d\d)(?:\s+(\S+))?\s*$/.exec(value);
  if (!m) throw new UsageError(`--window must look like "22:00-06:00 Europe/Berlin" (time zone optional, default UTC) or off (got "${value}")`);
  return { start: m[1], end: m[2], timeZone: m[3] ?? 'UTC' };
}

/** Help text for set-limits flags, from the same bounds the spec schema and the workflow enforce. */
const LIMIT_FLAG_HELP = {
  concurrency: `partitions in flight (${LIMIT_BOUNDS.concurrency.min}-${LIMIT_BOUNDS.concurrency.max})`,
  chunkSize: `rows per chunk (${LIMIT_BOUNDS.chunkSize.min}-${LIMIT_BOUNDS.chunkSize.max})`,
};

export function command(): Command {
  return new Command('set-limits')
    .description("change a running run's limits; they take effect within one chunk")
    .argument('<run>', 'run id, fleet id (fleet-…: every running member, or --member) or workflow id')
    .addOption(memberOption())
    .option('--concurrency <n>', LIMIT_FLAG_HELP.concurrency)
    .option('--chunk-size <n>', LIMIT_FLAG_HELP.chunkSize)
    .option('--rows-per-second <n|off>', 'rows/s cap, or off')
    .option('--window <hours|off>', 'allowed hours, e.g. "22:00-06:00 Europe/Berlin", or off')
    .option('--target-chunk-seconds <n|off>', 'adapt chunk sizes so a chunk takes about this long, or off (fixed chunk size)')
    .option('--guards <file|off>', "replace the run's guards with those in a YAML file (as under limits.guards in a spec), or off")
    .addOption(actorOption())
    .addOption(reasonOption())
    .addOption(databaseOption())
    .addOption(outputOption())
    .addHelpText(
      'after',
      '\nExamples:\n  backfill set-limits 20261130-0245-9f3ab2c47e01d65b --concurrency 2 --reason "replica lag"\n  backfill set-limits 20261130-0245-9f3ab2c47e01d65b --rows-per-second off\n  backfill set-limits 20261130-0245-9f3ab2c47e01d65b --guards guards.yaml --reason "lag guard for the sale"',
    )
    .action(setLimits);
}
