/** `backfill report`: a run's report for reviewers, from the ledger alone, as Markdown or one self-contained HTML page. */
import { writeFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { collectReport } from '../../report/collect';
import { renderHtml, renderMarkdown } from '../../report/render';
import { runLabel } from '../../shared/labels';
import { databaseOption } from '../options';
import { withLedger } from '../session';

async function report(ref: string, opts: { database: string; format: 'markdown' | 'html'; out?: string }): Promise<void> {
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

export function command(): Command {
  return new Command('report')
    .description("a run's report for reviewers: scope, frozen transform, partitions, throughput and chunk charts, gates, downstream, audit trail")
    .argument('<run>', 'run id or workflow id')
    .addOption(new Option('--format <format>', 'markdown, or html (one self-contained page with charts)').choices(['markdown', 'html']).default('markdown'))
    .option('--out <file>', 'write to this file instead of standard output')
    .addOption(databaseOption())
    .action(report);
}
