/**
 * The one module that opens connections to Temporal: a Client for operators (CLI, demo,
 * tests, benchmarks) and a NativeConnection for workers, both from one TemporalConfig.
 * Connection options (TLS, API keys) belong here and nowhere else.
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { temporalConfig, type TemporalConfig } from './config';

export interface ConnectedClient {
  client: Client;
  close(): Promise<void>;
}

export async function connectClient(config: Pick<TemporalConfig, 'address' | 'namespace'> = temporalConfig()): Promise<ConnectedClient> {
  const connection = await Connection.connect({ address: config.address }).catch((err: Error) => {
    throw new Error(`cannot reach Temporal at ${config.address} (${err.message}); start it with: npx backfill dev`, { cause: err });
  });
  return { client: new Client({ connection, namespace: config.namespace }), close: () => connection.close() };
}

export async function connectWorker(config: Pick<TemporalConfig, 'address'> = temporalConfig()): Promise<NativeConnection> {
  return NativeConnection.connect({ address: config.address }).catch((err: Error) => {
    throw new Error(`cannot reach Temporal at ${config.address} (${err.message}); start it with: npx backfill dev`, { cause: err });
  });
}
