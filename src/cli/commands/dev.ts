import { startLocalServices, redact } from '../../dev/services';
import { installShutdownHandlers, untilInterrupted } from '../../dev/shutdown';

export async function devCommand(): Promise<void> {
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
