/** `backfill verify`: the run's frozen transform recomputed and compared with the target now; exit 1 on mismatches. */
import { Command } from 'commander';
import { verifyRun, type VerifyReport } from '../../operations/verify-run';
import { runLabel } from '../../domain/labels';
import { databaseOption, outputOption } from '../options';
import { emit, format, type OutputOptions } from '../output';
import { withBackfill, withLedger } from '../with-backfill';
import { UsageError } from '../output';
import { isFleetRef } from '../../fleet/start-fleet';
import { verifyFleet, type FleetVerifyReport } from '../../fleet/verify-fleet';

async function verify(ref: string, opts: OutputOptions & { database: string; partition?: string; member?: string }): Promise<void> {
  if (isFleetRef(ref)) return verifyWholeFleet(ref, opts);
  if (opts.member) throw new UsageError(`--member names a member of a fleet: ${ref} is a run (verify a fleet with: backfill verify fleet-… --member NAME)`);
  await withLedger(opts.database, async ({ pool, findRun }) => {
    const run = await findRun(ref);
    const progress =
      format(opts) !== 'text' || !process.stderr.isTTY
        ? undefined
        : (p: { id: string; wrong: number }, done: number, total: number) =>
            process.stderr.write(`\r  ${done}/${total} partitions checked${p.wrong ? `; ${p.id}: ${p.wrong} wrong` : ''}\u001b[K`);
    const report = await verifyRun(pool, run, { partition: opts.partition, onPartition: progress });
    if (progress) process.stderr.write('\n');
    emit(opts, report, renderVerify);
    if (!report.clean) process.exitCode = 1;
  });
}

/** Every member (or `--member`) verified as a run is, from its own database; exit 1 unless all that ran are verified clean. */
async function verifyWholeFleet(ref: string, opts: OutputOptions & { database: string; partition?: string; member?: string }): Promise<void> {
  if (opts.partition)
    throw new UsageError(
      "--partition names one run's partition: verify a fleet member's run with: backfill verify <member run> --database <member> --partition <id>",
    );
  await withBackfill(opts.database, async (backfill) => {
    const progress =
      format(opts) !== 'text' || !process.stderr.isTTY
        ? undefined
        : (member: string) => (p: { id: string; wrong: number }, done: number, total: number) =>
            process.stderr.write(`\r  ${member}: ${done}/${total} partitions checked${p.wrong ? `; ${p.id}: ${p.wrong} wrong` : ''}\u001b[K`);
    const report = await verifyFleet(await backfill.client(), ref, {
      ledgerVariable: opts.database,
      ...(opts.member ? { member: opts.member } : {}),
      ...(progress ? { onPartition: progress } : {}),
    });
    if (progress) process.stderr.write('\n');
    emit(opts, report, renderFleetVerify);
    if (!report.clean) process.exitCode = 1;
  });
}

function renderFleetVerify(r: FleetVerifyReport): string {
  const lines = [`Verify fleet ${r.name}/${r.fleetId}: ${r.clean ? 'CLEAN' : 'NOT CLEAN'} — ${r.members.filter((m) => m.report).length} member(s) verified`];
  for (const m of r.members) {
    if (m.report)
      lines.push(
        ...renderVerify(m.report)
          .split('\n')
          .map((line, i) => (i === 0 ? `${m.variable}: ${line}` : `  ${line}`)),
      );
    else lines.push(`${m.variable}: not verified: ${m.notVerified!.reason}`);
  }
  return lines.join('\n');
}

function renderVerify(r: VerifyReport): string {
  const wrong = r.partitions.filter((p) => p.wrong > 0);
  const lines = [
    `Verify ${runLabel(r.name, r.runId)}: ${r.clean ? 'CLEAN' : 'MISMATCHES'} — ${r.partitions.length} partition(s), ${r.rowsCompared} row(s) recomputed and compared with the target`,
  ];
  for (const p of wrong) {
    const c = p.comparison;
    if (c && c.differing + c.missing + c.extra > 0) {
      lines.push(`  ${p.id}: ${c.differing} differ, ${c.missing} absent, ${c.extra} not produced by the transform; keys: ${c.examples.join(', ')}`);
      for (const range of c.ranges.slice(0, 5)) lines.push(`      in ${range}`);
    }
    for (const i of p.invariants.filter((x) => x.violations > 0))
      lines.push(`  ${p.id}: invariant ${i.name}: ${i.violations} violation(s), e.g. ${i.examples.slice(0, 3).join(' ')}`);
  }
  for (const i of r.runInvariants.filter((x) => x.violations > 0))
    lines.push(`  whole run: invariant ${i.name}: ${i.violations} violation(s), e.g. ${i.examples.slice(0, 3).join(' ')}`);
  if (r.skipped.length > 0) lines.push(`  not compared (did not succeed): ${r.skipped.map((s) => `${s.id} (${s.status})`).join(', ')}`);
  return lines.join('\n');
}

export function command(): Command {
  return new Command('verify')
    .description("recompute the run's frozen transform and compare it with the target now, partition by partition; exit 1 on mismatches")
    .argument('<run>', 'run id, fleet id (fleet-…) or workflow id')
    .option('--partition <id>', 'only this partition')
    .option('--member <name>', "a fleet's member (its variable): verify only its run")
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(verify);
}
