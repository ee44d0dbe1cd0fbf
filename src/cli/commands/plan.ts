/** `backfill plan`: the checks, partitions and inputs of a spec; writes nothing in the database. */
import { Command } from 'commander';
import type { PlanEstimate } from '../../operations/estimate-plan';
import { planSpec } from '../../operations/plan-spec';
import { shortHash, transformLabel } from '../../domain/labels';
import type { InputFingerprint } from '../../preflight/input-fingerprints';
import { emit, UsageError, type OutputOptions } from '../output';
import { planFleet } from '../../fleet/plan-fleet';
import { namesFleet } from '../../fleet/load-fleet';
import { readSpecFile } from '../../specs/load';
import { renderFleetPlan } from '../render/fleet-plan';
import { savedFleetPlanOf, writeSavedFleetPlan } from '../../fleet/fleet-saved-plan';
import { defaultActor } from '../../operations/actor';
import { outputOption } from '../options';
import { bytes, count as n, duration as seconds } from '../render/units';
import { describeSubset } from '../../compiler/subset';
import { subsetFlags } from './start';
import { describeGuards } from '../render/guard-readings';

async function plan(
  specFile: string,
  opts: OutputOptions & {
    save?: string;
    measureWrites?: boolean;
    measureGuards?: boolean;
    exclude?: string[];
    reason?: string;
    partition?: string[];
    from?: string;
    to?: string;
  },
): Promise<void> {
  const subset = subsetFlags(opts);
  if (namesFleet(readSpecFile(specFile))) {
    if (subset) throw new UsageError('--partition, --from and --to are not taken by a fleet yet: plan part of it on one member with a spec of its own');
    return planAFleet(specFile, opts);
  }
  if (opts.exclude) throw new UsageError('--exclude names members of a fleet: this spec names one database');
  const p = await planSpec(specFile, {
    measureWrites: opts.measureWrites === true,
    measureGuards: opts.measureGuards === true,
    save: opts.save,
    ...(subset ? { subset } : {}),
  });
  emit(opts, p, (p) => {
    const shown = p.partitions.slice(0, 10).map((x) => `  ${x.id}`);
    if (p.partitions.length > 10) shown.push(`  … and ${p.partitions.length - 10} more`);
    return [
      `Spec ${specFile} is valid: ${p.name}`,
      `  transform ${transformLabel(p.transform)}, spec hash ${shortHash(p.specHash)}`,
      ...(p.transform.bundled ? [`  bundled: ${p.transform.bundled.join(', ')}`] : []),
      `  target ${p.target.table} (${p.target.mode} by ${p.target.key.join(', ')}); chunks of ${p.limits.chunkSize}, ${p.limits.concurrency} partitions at a time`,
      ...(p.inputs.length > 0 ? ['  the transform also reads (checked before each partition):', ...p.inputs.map((i) => `    ${describeInput(i)}`)] : []),
      p.subset ? `  a subset: ${describeSubset(p.subset)}:` : `  ${p.partitions.length} partitions:`,
      ...shown,
      ...describeEstimate(p.estimate, p.limits.concurrency),
      ...(p.guards ? describeGuards(p.guards) : []),
      ...p.warnings.map((w) => `warning: ${w}`),
      ...(opts.save
        ? [
            `Plan saved to ${opts.save}. Once approved, start exactly this plan with:`,
            `  backfill start ${specFile} --plan ${opts.save} --approved-by <who approved>`,
          ]
        : []),
    ].join('\n');
  });
}

/** A fleet spec: every member planned, one table; exit 2 while a member the plan does not exclude cannot take the spec. */
async function planAFleet(
  specFile: string,
  opts: OutputOptions & { save?: string; measureWrites?: boolean; measureGuards?: boolean; exclude?: string[]; reason?: string },
): Promise<void> {
  const p = await planFleet(specFile, {
    measureWrites: opts.measureWrites === true,
    measureGuards: opts.measureGuards === true,
    exclude: opts.exclude,
    reason: opts.reason,
    keepSavedPlan: opts.save !== undefined,
  });
  // a refused plan is not saved: there is nothing to approve
  if (opts.save && p.ok) writeSavedFleetPlan(opts.save, savedFleetPlanOf(p, defaultActor()));
  const { members, ...rest } = p;
  const shown = { ...rest, members: members.map(({ savedPlan: _saved, ...m }) => m), ...(opts.save && p.ok ? { saved: opts.save } : {}) };
  emit(opts, shown, (x) =>
    [
      renderFleetPlan(p, specFile),
      ...(x.saved
        ? [
            `Plan saved to ${x.saved}. Once approved, start exactly this fleet with:`,
            `  backfill start ${specFile} --plan ${x.saved} --approved-by <who approved>`,
          ]
        : []),
    ].join('\n'),
  );
  if (!p.ok) process.exitCode = 2;
}

function describeInput(i: InputFingerprint): string {
  if (i.kind === 'function') return `function ${i.name} (definition ${shortHash(i.definition)})`;
  return i.rows !== undefined ? `${i.kind} ${i.name}: ${i.rows} rows, content ${shortHash(i.content!)}` : `${i.kind} ${i.name}: ${i.uncovered}`;
}

function describeEstimate(e: PlanEstimate, concurrency: number): string[] {
  const { scope, sample, projected } = e;
  const perThousand = sample.rows > 0 ? (sample.computeMs / sample.rows) * 1000 : 0;
  const lines = [
    'Estimate:',
    `  scope:     ${n(scope.rows)} rows ${scope.exact ? '(counted)' : "(the planner's estimate)"}, about ${n(scope.rowsPerPartition)} per partition${scope.bytesRead !== null ? `, about ${bytes(scope.bytesRead)} to read` : ''}`,
    `  sample:    ${n(sample.rows)} rows from ${sample.partitions.join(', ')}: ${n(sample.inserts)} to insert, ${n(sample.updates)} to update, ${n(sample.unchanged)} unchanged; ` +
      `read and transformed at ${perThousand.toFixed(1)} ms per 1,000 rows` +
      (sample.writeMs !== undefined ? `; written (then rolled back) in ${sample.writeMs} ms, ${bytes(sample.walBytes ?? 0)} of WAL` : ''),
    `  projected: ${n(projected.inserts)} inserts, ${n(projected.updates)} updates, ${n(projected.unchanged)} unchanged` +
      (projected.walBytes !== undefined
        ? `; about ${bytes(projected.walBytes)} of WAL, the target growing by about ${bytes(projected.storageBytes ?? 0)} until vacuumed`
        : ''),
    ...(projected.images
      ? [
          `  undo:      before-images of about ${n(projected.images.rows)} rows${projected.images.bytes !== undefined ? `, about ${bytes(projected.images.bytes)}` : ''}` +
            `${e.sample.imageRows !== undefined ? '' : ' (their size: plan --measure-writes)'}, kept ${projected.images.keep} after the run (docs/undo.md)`,
        ]
      : []),
    `  duration:  ${projected.lowerBound ? 'at least ' : 'about '}${seconds(projected.durationSeconds)} at concurrency ${concurrency}, set by ${projected.bindingLimit}` +
      (projected.lowerBound ? ' (the writes are not measured: plan --measure-writes writes the sample and rolls it back)' : ''),
    `  assumes:   ${projected.assumes.join('; ')}`,
  ];
  if (e.preview.length > 0) {
    lines.push('  changes (a few sample rows, current → computed):');
    for (const r of e.preview) {
      const what =
        r.change === 'insert'
          ? `insert ${JSON.stringify(r.computed)}`
          : r.changed.map((c) => `${c}: ${JSON.stringify(r.current![c])} → ${JSON.stringify(r.computed[c])}`).join(', ');
      lines.push(`    ${r.key}: ${what}`);
    }
  }
  return lines;
}

export function command(): Command {
  return new Command('plan')
    .description('check a spec and show its partitions and inputs without starting or writing anything')
    .argument('<spec>', 'the spec file (YAML)')
    .option('--save <file>', 'write the plan (hashes, partitions, input fingerprints, estimates) for review; start it with start --plan')
    .option('--partition <id...>', 'plan only these partitions, as start --partition would run them')
    .option('--from <bound>', 'plan only the partitions that meet [from, to) on the partition column, as start --from would')
    .option('--to <bound>', 'the end of that stretch, not included')
    .option('--measure-writes', 'also write the sample chunks, in a transaction that is rolled back, to measure write time and WAL')
    .option(
      '--measure-guards',
      "also read the spec's guards (and commitMs) for a few seconds, as the workers will, and say where a threshold would slow or hold the run from its start",
    )
    .option('--exclude <member...>', 'a fleet spec: leave these members out on purpose (with --reason)')
    .option('--reason <text>', 'why the --exclude members are left out; kept with the plan')
    .addOption(outputOption())
    .action(plan);
}
