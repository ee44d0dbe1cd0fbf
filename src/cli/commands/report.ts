/** `backfill report`: a run's report for reviewers, from the ledger alone, as Markdown or one self-contained HTML page. */
import { writeFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { renderHtml } from '../../report/html';
import { renderMarkdown } from '../../report/markdown';
import { runLabel } from '../../domain/labels';
import { databaseOption } from '../options';
import { UsageError } from '../output';
import { withBackfill } from '../with-backfill';
import { isFleetRef } from '../../fleet/start-fleet';
import { collectFleetReport } from '../../fleet/fleet-report';
import { renderFleetMarkdown } from '../../report/fleet-markdown';

type ReportFormat = 'markdown' | 'html' | 'json';

async function report(ref: string, opts: { database: string; output?: ReportFormat; format?: 'markdown' | 'html'; out?: string }): Promise<void> {
  if (opts.output && opts.format && opts.output !== opts.format) {
    throw new UsageError(`-o ${opts.output} and --format ${opts.format} disagree; --format is the older name of -o: give one`);
  }
  const as = opts.output ?? opts.format ?? 'markdown';
  if (isFleetRef(ref)) return reportFleet(ref, as, opts.out, opts.database);
  await withBackfill(opts.database, async (backfill) => {
    const data = await backfill.report(ref);
    const text = as === 'html' ? renderHtml(data) : as === 'json' ? `${JSON.stringify(data, null, 2)}\n` : renderMarkdown(data);
    if (!opts.out) {
      process.stdout.write(text);
      return;
    }
    writeFileSync(opts.out, text);
    process.stderr.write(`Report of ${runLabel(data.summary.name, data.summary.runId)} written to ${opts.out}\n`);
  });
}

/** A fleet: its record and outcome, then each member's own report (Markdown or JSON; a page of HTML per member: report it with --database). */
async function reportFleet(ref: string, as: ReportFormat, out: string | undefined, database: string): Promise<void> {
  if (as === 'html')
    throw new UsageError(
      "-o html renders one run's page: report a fleet as markdown or json, or one member with: backfill report <member run> --database <member> -o html",
    );
  await withBackfill(database, async (backfill) => {
    // once Temporal has forgotten the fleet, it is read from its members' ledgers, --database's first
    const data = await collectFleetReport(await backfill.client(), ref, process.env, database);
    const text = as === 'json' ? `${JSON.stringify(data, null, 2)}\n` : renderFleetMarkdown(data);
    if (!out) return void process.stdout.write(text);
    writeFileSync(out, text);
    process.stderr.write(`Report of fleet ${data.fleet.fleetId} written to ${out}\n`);
  });
}

export function command(): Command {
  return new Command('report')
    .description("a run's report for reviewers: scope, frozen transform, partitions, throughput and chunk charts, gates, downstream, audit trail")
    .argument('<run>', 'run id, fleet id (fleet-…) or workflow id')
    .addOption(
      new Option('-o, --output <format>', "markdown (default), html (one self-contained page with charts) or json (the report's data)").choices([
        'markdown',
        'html',
        'json',
      ]),
    )
    .addOption(new Option('--format <format>', 'the older name of -o, kept for scripts').choices(['markdown', 'html']))
    .option('--out <file>', 'write to this file instead of standard output')
    .addOption(databaseOption())
    .addHelpText(
      'after',
      '\nExamples:\n  backfill report 20261202-1431-efb821bb3c83d78a > change-ticket.md\n  backfill report 20261202-1431-efb821bb3c83d78a -o html --out report.html',
    )
    .action(report);
}
