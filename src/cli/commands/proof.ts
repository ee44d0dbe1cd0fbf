/**
 * `backfill approve | verify | after | report`: what comes after the writes — a person letting a
 * canary-held run expand, proof that the target holds what the transform computes, and the
 * downstream actions run (again) once the run succeeded.
 */
import { writeFileSync } from 'node:fs';
import { runAfterActions } from '../../downstream/after-actions';
import { CleanupRefused, cleanupRun } from '../../downstream/cleanup';
import { collectReport } from '../../report/collect';
import { renderHtml, renderMarkdown } from '../../report/render';
import { defaultActor } from '../../operations/actor';
import { approveRun } from '../../operations/control';
import { verifyRun, type VerifyReport } from '../../operations/verify-run';
import { workerTrustFromEnv } from '../../security/worker-trust';
import { runLabel } from '../../shared/labels';
import { emit, UsageError, type OutputOptions } from '../output';
import { withLedger, withLedgerAndTemporal } from '../session';

type ActorOptions = OutputOptions & { database: string; actor?: string; reason?: string };

export async function approveCommand(ref: string, opts: ActorOptions): Promise<void> {
  await withLedgerAndTemporal(opts.database, async ({ client, findRun }) => {
    const run = await findRun(ref);
    await approveRun({ client }, run, { actor: opts.actor ?? defaultActor(), reason: opts.reason });
    emit(opts, { runId: run.run_id, approved: true }, () => `Run ${runLabel(run.name, run.run_id)} approved; it expands beyond its canary. Follow with: backfill watch ${run.run_id}`);
  });
}

export async function verifyCommand(ref: string, opts: OutputOptions & { database: string; partition?: string }): Promise<void> {
  await withLedger(opts.database, async ({ pool, findRun }) => {
    const run = await findRun(ref);
    const progress = opts.output === 'json' || !process.stderr.isTTY
      ? undefined
      : (p: { id: string; wrong: number }, done: number, total: number) => process.stderr.write(`\r  ${done}/${total} partitions checked${p.wrong ? `; ${p.id}: ${p.wrong} wrong` : ''}\u001b[K`);
    const report = await verifyRun(pool, run, { partition: opts.partition, onPartition: progress });
    if (progress) process.stderr.write('\n');
    emit(opts, report, renderVerify);
    if (!report.clean) process.exitCode = 1;
  });
}

export function renderVerify(r: VerifyReport): string {
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
    for (const i of p.invariants.filter((x) => x.violations > 0)) lines.push(`  ${p.id}: invariant ${i.name}: ${i.violations} violation(s), e.g. ${i.examples.slice(0, 3).join(' ')}`);
  }
  for (const i of r.runInvariants.filter((x) => x.violations > 0)) lines.push(`  whole run: invariant ${i.name}: ${i.violations} violation(s), e.g. ${i.examples.slice(0, 3).join(' ')}`);
  if (r.skipped.length > 0) lines.push(`  not compared (did not succeed): ${r.skipped.map((s) => `${s.id} (${s.status})`).join(', ')}`);
  return lines.join('\n');
}

export async function afterCommand(ref: string, opts: ActorOptions): Promise<void> {
  await withLedger(opts.database, async ({ pool, findRun }) => {
    const run = await findRun(ref);
    if ((run.spec.after?.length ?? 0) === 0) throw new UsageError(`run ${runLabel(run.name, run.run_id)} has no after-actions in its spec`);
    if (run.status !== 'succeeded') throw new UsageError(`run ${runLabel(run.name, run.run_id)} is ${run.status}: after-actions run only after every partition succeeded and every gate passed`);
    const outcome = await runAfterActions(pool, run.run_id, { trust: workerTrustFromEnv(), actor: opts.actor ?? defaultActor() });
    emit(opts, outcome, (o) =>
      [
        `Downstream of ${runLabel(run.name, run.run_id)}: ${o.downstream}`,
        ...o.actions.map((a) => `  ${a.status.padEnd(9)} ${a.description}${a.last_error ? `: ${a.last_error}` : ''}`),
      ].join('\n'),
    );
    if (outcome.downstream !== 'succeeded') process.exitCode = 1;
  });
}

export async function reportCommand(ref: string, opts: { database: string; format: 'markdown' | 'html'; out?: string }): Promise<void> {
  await withLedger(opts.database, async ({ pool, findRun }) => {
    const data = await collectReport(pool, await findRun(ref));
    const text = opts.format === 'html' ? renderHtml(data) : renderMarkdown(data);
    if (!opts.out) {
      process.stdout.write(text);
      return;
    }
    writeFileSync(opts.out, text);
    process.stderr.write(`Report of ${runLabel(data.summary.name, data.summary.runId)} written to ${opts.out}\n`);
  });
}

export async function cleanupCommand(ref: string, opts: ActorOptions): Promise<void> {
  await withLedger(opts.database, async ({ pool, findRun }) => {
    const run = await findRun(ref);
    try {
      const { removed } = await cleanupRun(pool, run.run_id, opts.actor ?? defaultActor());
      emit(opts, { runId: run.run_id, removed }, () => `Temporary state of ${runLabel(run.name, run.run_id)} removed (${removed.rateLimits} rate-limit row(s)); the run's record, chunk log and gate results stay.`);
    } catch (err) {
      if (err instanceof CleanupRefused) throw new UsageError(`cannot clean up yet: ${err.message}`);
      throw err;
    }
  });
}
