/** `backfill start`: check, plan and start a run; with --wait, follow it to its end. */
import { Command } from 'commander';
import { loadSpecFile, readSpecFile } from '../../specs/load';
import { namesFleet } from '../../fleet/load-fleet';
import { followFleet } from '../follow-fleet';
import { isSavedFleetPlan } from '../../fleet/fleet-saved-plan';
import { emit, format, UsageError, type OutputOptions } from '../output';
import { withBackfill } from '../with-backfill';
import { followToEnd } from '../follow';
import { outputOption } from '../options';
import { isSubsetRequest, type SubsetRequest } from '../../compiler/subset';

type StartFlags = OutputOptions & {
  runId?: string;
  wait?: boolean;
  actor?: string;
  plan?: string;
  approvedBy?: string;
  onlyStale?: boolean;
  partition?: string[];
  from?: string;
  to?: string;
  exclude?: string[];
  reason?: string;
};

/** `--partition`, `--from`, `--to` as the run's subset; undefined without them. */
export function subsetFlags(opts: { partition?: string[]; from?: string; to?: string }): SubsetRequest | undefined {
  const subset = {
    ...(opts.partition ? { partitions: opts.partition } : {}),
    ...(opts.from !== undefined ? { from: opts.from } : {}),
    ...(opts.to !== undefined ? { to: opts.to } : {}),
  };
  return isSubsetRequest(subset) ? subset : undefined;
}

async function start(specFile: string, opts: StartFlags): Promise<void> {
  if (opts.plan && !opts.approvedBy) throw new UsageError('--plan needs --approved-by <name>: who approved the plan is kept with the run');
  if (opts.approvedBy && !opts.plan) throw new UsageError('--approved-by goes with --plan <file>, the plan that was approved');
  if (namesFleet(readSpecFile(specFile))) return startAFleet(specFile, opts);
  if (opts.exclude) throw new UsageError('--exclude names members of a fleet: this spec names one database');
  // a bad spec is bad input (exit 2) whether or not Temporal is up: read it before connecting
  const { spec } = loadSpecFile(specFile);
  await withBackfill(spec.database, async (backfill) => {
    const started = await backfill.start(specFile, {
      runId: opts.runId,
      actor: opts.actor,
      ...(opts.plan ? { approval: { planFile: opts.plan, approvedBy: opts.approvedBy! } } : {}),
      ...(opts.onlyStale ? { onlyStale: true } : {}),
      ...(subsetFlags(opts) ? { subset: subsetFlags(opts) } : {}),
    });
    const { result: _result, ...info } = started;
    if (format(opts) === 'text') for (const w of started.warnings) process.stderr.write(`warning: ${w}\n`);
    if (!opts.wait) {
      emit(
        opts,
        info,
        (i) =>
          `Started ${i.name}/${i.runId}: ${i.partitions} partitions\n  workflow: ${i.workflowId}\n  Web UI:   ${i.webUi}\n  follow:   backfill status ${i.runId}`,
      );
      return;
    }
    if (format(opts) === 'text') process.stderr.write(`Started ${info.name}/${info.runId}: ${info.partitions} partitions\nWeb UI: ${info.webUi}\n`);
    await followToEnd(backfill, started.runId, opts);
  });
}

/** A fleet spec: every member checked and planned, then one fleet run; members start in their waves. */
async function startAFleet(specFile: string, opts: StartFlags): Promise<void> {
  if (opts.plan && !isSavedFleetPlan(opts.plan))
    throw new UsageError(`--plan ${opts.plan} is not a fleet's saved plan; make one with: backfill plan ${specFile} --save fleet-plan.json`);
  if (opts.onlyStale) throw new UsageError('--only-stale is not taken by a fleet yet: run it on one member with a spec of its own');
  if (subsetFlags(opts))
    throw new UsageError('--partition, --from and --to are not taken by a fleet yet: run part of the plan on one member with a spec of its own');
  await withBackfill('DATABASE_URL', async (backfill) => {
    const started = await backfill.startFleet(specFile, {
      fleetId: opts.runId,
      actor: opts.actor,
      exclude: opts.exclude,
      reason: opts.reason,
      ...(opts.plan ? { approval: { planFile: opts.plan, approvedBy: opts.approvedBy! } } : {}),
    });
    const { result: _result, ...info } = started;
    const text = (i: typeof info) =>
      [
        `Started fleet ${i.name}/${i.fleetId}: ${i.members.length} member(s) in ${i.waves} wave(s)${i.excluded.length ? `, ${i.excluded.length} excluded` : ''}`,
        ...i.members.map((m) => `  wave ${m.wave}  ${m.variable}  run ${m.runId}  ${m.partitions} partitions`),
        `  workflow: ${i.workflowId}`,
        `  Web UI:   ${i.webUi}`,
        `  follow:   backfill status ${i.fleetId}`,
      ].join('\n');
    if (!opts.wait) return emit(opts, info, text);
    if (format(opts) === 'text') process.stderr.write(`${text(info)}\n`);
    await followFleet(backfill, started.fleetId, opts);
  });
}

export function command(): Command {
  return new Command('start')
    .description('check a spec against the database, plan it and start a durable run')
    .argument('<spec>', 'the spec file (YAML)')
    .option('--run-id <id>', 'run id (default: the UTC minute and 16 random hex digits)')
    .option('--wait', 'follow progress until the run finishes; exit 1 if it did not succeed')
    .option('--actor <name>', 'who starts it, for the audit record (default: OS user)')
    .option('--plan <file>', 'start only if the spec still makes this saved plan (backfill plan --save); refused, naming each difference, otherwise')
    .option('--approved-by <name>', 'who approved the plan (with --plan); kept with the run')
    .option('--partition <id...>', 'run only these partitions of the plan (ids as plan lists them; docs/operating.md "Run part of the plan")')
    .option('--from <bound>', 'run only the partitions that meet [from, to) on the partition column: a number, a date or a timestamp')
    .option('--to <bound>', 'with --from, or alone: the end of that stretch, not included')
    .option('--only-stale', 'only the partitions backfill stale lists: written by another transform version, or before an accepted input change')
    .option('--exclude <member...>', "a fleet spec: leave these members out on purpose (with --reason); kept in every member's ledger")
    .option('--reason <text>', 'why members are excluded (with --exclude)')
    .addOption(outputOption())
    .addHelpText(
      'after',
      '\nExamples:\n  backfill start examples/orders-usd.yaml --wait\n  backfill start spec.yaml --run-id inc-142-retry -o json\n  backfill start spec.yaml --plan plan.json --approved-by alice\n  backfill start fleet.yaml --exclude EU_DB --reason "EU freeze until Monday"',
    )
    .action(start);
}
