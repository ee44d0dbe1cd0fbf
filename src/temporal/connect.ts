/**
 * The one module that opens connections to Temporal: a Client for operators (CLI, demo,
 * tests, benchmarks) and a NativeConnection for workers, both from one TemporalConfig, with
 * its TLS, API key and payload encryption. A worker's data converter comes from here too, so
 * both ends always agree on how payloads are encoded.
 */
import { Client, Connection, type DataConverter } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import type { NativeConnection } from '@temporalio/worker';
import { AesGcmPayloadCodec } from './payload-codec';
import { temporalConfig, type TemporalConfig } from './config';
import { UnreachableError } from '../domain/unreachable-error';

export interface ConnectedClient {
  client: Client;
  close(): Promise<void>;
}

type ConnectConfig = Pick<TemporalConfig, 'address' | 'namespace'> & Partial<Pick<TemporalConfig, 'connection' | 'payloadKeys'>>;

function unreachable(config: Pick<TemporalConfig, 'address' | 'connection'>, err: Error): Error {
  const how = config.connection?.tls ? ' over TLS' : '';
  return new UnreachableError(
    `cannot reach Temporal at ${config.address}${how} (${err.message}); start it with: backfill dev, or check TEMPORAL_ADDRESS and the TLS settings`,
    { cause: err },
  );
}

/** Payload encryption (and encoded failure messages) when keys are configured; the SDK's default otherwise. */
export function dataConverterFor(config: Partial<Pick<TemporalConfig, 'payloadKeys'>>): DataConverter | undefined {
  if (!config.payloadKeys) return undefined;
  return { payloadCodecs: [new AesGcmPayloadCodec(config.payloadKeys)], failureConverterPath: require.resolve('./failure-converter') };
}

/** `connectTimeout` (default 10 s) bounds the wait for a server that is not there, e.g. `2s` for a command that can do without it. */
export async function connectClient(config: ConnectConfig = temporalConfig(), options: { connectTimeout?: Duration } = {}): Promise<ConnectedClient> {
  const connection = await Connection.connect({ address: config.address, ...config.connection, ...options }).catch((err: Error) => {
    throw unreachable(config, err);
  });
  const dataConverter = dataConverterFor(config);
  return { client: new Client({ connection, namespace: config.namespace, ...(dataConverter ? { dataConverter } : {}) }), close: () => connection.close() };
}

export async function connectWorker(
  config: Pick<TemporalConfig, 'address'> & Partial<Pick<TemporalConfig, 'connection'>> = temporalConfig(),
): Promise<NativeConnection> {
  // loaded here, not with the module: the CLI connects clients only, and the worker runtime
  // (its native bridge, rxjs, memfs) costs every command a few hundred milliseconds to load
  const { NativeConnection } = await import('@temporalio/worker');
  return NativeConnection.connect({ address: config.address, ...config.connection }).catch((err: Error) => {
    throw unreachable(config, err);
  });
}
