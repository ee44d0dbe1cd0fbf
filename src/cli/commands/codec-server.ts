/**
 * `backfill codec-server`: the Temporal codec-server protocol over the payload codec, so the Web
 * UI and the `temporal` CLI can show what BACKFILL_PAYLOAD_KEY encrypts, until Ctrl-C.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { installShutdownHandlers, untilInterrupted } from '../../dev/shutdown';
import { UsageError } from '../../domain/usage-error';
import { startCodecServer } from '../../temporal/codec-server';
import { envSettings } from '../../util/env-settings';
import { AesGcmPayloadCodec, payloadKeysFromEnv } from '../../temporal/payload-codec';

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('must be a port number from 0 to 65535');
  return n;
}

function origin(value: string, previous: string[] | undefined): string[] {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be an origin such as http://127.0.0.1:8233');
  }
  if (url.origin !== value.replace(/\/$/, '')) throw new InvalidArgumentError(`must be an origin only (scheme, host and port), such as ${url.origin}`);
  return [...(previous ?? []), url.origin];
}

async function codecServer(opts: { host: string; port: number; uiOrigin?: string[] }): Promise<void> {
  const keys = payloadKeysFromEnv();
  if (!keys)
    throw new UsageError('BACKFILL_PAYLOAD_KEY is not set: the codec server decodes with the keys the workers encrypt with (BACKFILL_PAYLOAD_OLD_KEYS too)');
  const token = envSettings().BACKFILL_CODEC_TOKEN;
  const uiOrigins = opts.uiOrigin ?? ['http://127.0.0.1:8233', 'http://localhost:8233'];
  installShutdownHandlers();
  const server = await startCodecServer(new AesGcmPayloadCodec(keys), { host: opts.host, port: opts.port, uiOrigins, token });
  process.stdout.write(
    [
      `Codec server: ${server.url}   (Web UI origins: ${uiOrigins.join(', ')}${token ? '; requests need Authorization: Bearer $BACKFILL_CODEC_TOKEN' : ''})`,
      `Web UI:       temporal server start-dev --ui-codec-endpoint ${server.url}   (a UI server: TEMPORAL_CODEC_ENDPOINT=${server.url})`,
      `temporal CLI: temporal workflow describe --workflow-id … --codec-endpoint ${server.url}`,
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
  await untilInterrupted();
  await server.close();
}

export function command(): Command {
  return new Command('codec-server')
    .description(
      'serve the Temporal codec-server protocol with the payload keys (BACKFILL_PAYLOAD_KEY), so the Web UI and the temporal CLI show encrypted payloads; BACKFILL_CODEC_TOKEN makes it require Authorization: Bearer <token>',
    )
    .addOption(new Option('--port <n>', 'port to listen on').default(8888).argParser(port))
    .addOption(new Option('--host <address>', 'address to listen on; keep it local unless a proxy with TLS is in front').default('127.0.0.1'))
    .addOption(
      new Option(
        '--ui-origin <url>',
        'origin of a Web UI allowed to call it from a browser (repeatable; default http://127.0.0.1:8233 and http://localhost:8233)',
      ).argParser(origin),
    )
    .action(codecServer);
}
