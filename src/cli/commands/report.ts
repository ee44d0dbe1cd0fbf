/** `backfill report`: a run's report for reviewers, from the ledger alone, as Markdown or one self-contained HTML page. */
import { writeFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { renderHtml } from '../../report/html';
import { renderMarkdown } from '../../report/markdown';
import { runLabel } from '../../domain/labels';
import { databaseOption } from '../options';
import { UsageError } from '../output';
import { withBackfill, withLedger } from '../with-backfill';
import { isFleetRef } from '../../fleet/start-fleet';
import { collectFleetReport } from '../../fleet/fleet-report';
import { renderFleetMarkdown } from '../../report/fleet-markdown';
import { serveLiveGrid } from '../../report/live-grid';
import { runLink } from '../web-ui-links';

type ReportFormat = 'markdown' | 'html' | 'json';

async function report(
  ref: string,
  opts: { database: string; output?: ReportFormat; format?: 'markdown' | 'html'; out?: string; serve?: boolean; port?: string },
): Promise<void> {
  if (opts.serve) return serve(ref, opts);
  if (opts.port !== undefined) throw new UsageError('--port goes with --serve');
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

/** `--serve`: the live partition grid on 127.0.0.1 until Ctrl-C (docs/operating.md "Watching the partitions live"). */
async function serve(ref: string, opts: { database: string; output?: string; out?: string; port?: string }): Promise<void> {
  if (opts.output || opts.out) throw new UsageError('--serve shows the report live in a browser: it takes no -o or --out');
  if (isFleetRef(ref)) throw new UsageError('--serve shows one run: serve a member with backfill report <member run> --database <member> --serve');
  const port = Number(opts.port ?? DEFAULT_GRID_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number, 0 for any free one (got "${opts.port}")`);
  await withLedger(opts.database, async ({ pool, findRun }) => {
    const run = await findRun(ref);
    const grid = await serveLiveGrid(
      pool,
      { runId: run.run_id, name: run.name },
      {
        port,
        webUi: (workflowId) => runLink(workflowId),
        onError: (err) => process.stderr.write(`backfill: the ledger could not be read: ${err.message}\n`),
      },
    ).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'EADDRINUSE' ? new UsageError(`--port ${port} is taken on 127.0.0.1: choose another, or --port 0 for any free one`) : err;
    });
    process.stderr.write(`Live grid of ${runLabel(run.name, run.run_id)}: ${grid.url}\n  (this machine only; Ctrl-C ends it, the run goes on)\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await grid.close();
  });
}

/** The grid's port unless --port says otherwise: beside the Temporal dev server's Web UI (8233). */
const DEFAULT_GRID_PORT = 8234;

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
    .option('--serve', 'serve the partitions as a live grid on 127.0.0.1 until Ctrl-C, each linked to its workflow in the Temporal Web UI')
    .option('--port <port>', `with --serve: its port (default ${DEFAULT_GRID_PORT}; 0 for any free one)`)
    .addOption(databaseOption())
    .addHelpText(
      'after',
      '\nExamples:\n  backfill report 20261202-1431-efb821bb3c83d78a > change-ticket.md\n  backfill report 20261202-1431-efb821bb3c83d78a -o html --out report.html',
    )
    .action(report);
}
