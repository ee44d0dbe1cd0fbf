/** `backfill dev`: the local Temporal dev server and, without DATABASE_URL, an embedded PostgreSQL, until Ctrl-C. */
import { Command } from 'commander';
import { startLocalServices, redact } from '../../dev/services';
import { installShutdownHandlers, untilInterrupted } from '../../dev/shutdown';

async function dev(): Promise<void> {
  installShutdownHandlers();
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const services = await startLocalServices(say);
  process.stdout.write(
    [
      '',
      `Temporal:   ${services.temporalAddress}   (export TEMPORAL_ADDRESS=${services.temporalAddress})`,
      `Web UI:     ${services.uiUrl}`,
      `PostgreSQL: ${redact(services.postgresUrl)}${services.embeddedPostgres ? `   (export DATABASE_URL=${services.postgresUrl})` : ''}`,
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
  await untilInterrupted();
  await services.stop();
}

export function command(): Command {
  return new Command('dev')
    .description('run the local Temporal dev server (Web UI :8233) and, without DATABASE_URL, an embedded PostgreSQL, until Ctrl-C')
    .action(dev);
}
