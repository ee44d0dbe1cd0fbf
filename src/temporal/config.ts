/**
 * Where Temporal is and how to reach it, from the environment (docs/configuration.md):
 * TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, BACKFILL_TASK_QUEUE, TEMPORAL_UI_URL; TLS, API keys
 * and gRPC metadata exactly as the temporal CLI and every Temporal SDK read them
 * (TEMPORAL_TLS*, TEMPORAL_API_KEY, TEMPORAL_GRPC_META_*, or a profile of temporal.toml chosen
 * by TEMPORAL_PROFILE, through @temporalio/envconfig); BACKFILL_PAYLOAD_KEY turns payload
 * encryption on. Read at the edges only (the worker entry, the CLI, the demo); everything
 * below them receives a config object.
 */
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { payloadKeysFromEnv, type PayloadKeys } from './payload-codec';

export interface TemporalConfig {
  address: string;
  namespace: string;
  taskQueue: string;
  /** TLS (mTLS client pair, CA, server name), API key and gRPC metadata; absent for a plain local server. */
  connection?: Pick<NativeConnectionOptions, 'tls' | 'apiKey' | 'metadata'>;
  /** Payload encryption keys (BACKFILL_PAYLOAD_KEY); absent when payloads are stored as they are. */
  payloadKeys?: PayloadKeys;
}

/**
 * The shorter names some deployments use (the Temporal UI server's, and older docs'): each maps
 * to the envconfig name the temporal CLI reads, which wins when both are set.
 */
const ALIASES: Record<string, string> = {
  TEMPORAL_TLS_CERT: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
  TEMPORAL_TLS_KEY: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
  TEMPORAL_TLS_CA: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  TEMPORAL_TLS_CERT_DATA: 'TEMPORAL_TLS_CLIENT_CERT_DATA',
  TEMPORAL_TLS_KEY_DATA: 'TEMPORAL_TLS_CLIENT_KEY_DATA',
  TEMPORAL_TLS_CA_DATA: 'TEMPORAL_TLS_SERVER_CA_CERT_DATA',
};

export function temporalConfig(env: NodeJS.ProcessEnv = process.env): TemporalConfig {
  const withAliases: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== '') withAliases[k] = v;
  for (const [alias, name] of Object.entries(ALIASES)) if (withAliases[alias] && !withAliases[name]) withAliases[name] = withAliases[alias];
  let loaded;
  try {
    loaded = loadClientConnectConfig({ overrideEnvVars: withAliases });
  } catch (err) {
    throw new Error(
      `the Temporal connection settings cannot be read: ${(err as Error).message}; check TEMPORAL_TLS*, TEMPORAL_PROFILE and TEMPORAL_CONFIG_FILE (docs/configuration.md)`,
      { cause: err },
    );
  }
  const { tls, apiKey, metadata } = loaded.connectionOptions;
  const connection = Object.fromEntries(
    Object.entries({ tls, apiKey, metadata }).filter(([, v]) => v !== undefined && !(typeof v === 'object' && Object.keys(v as object).length === 0)),
  );
  return {
    address: loaded.connectionOptions.address || '127.0.0.1:7233',
    namespace: loaded.namespace || 'default',
    taskQueue: env.BACKFILL_TASK_QUEUE || 'backfill',
    ...(Object.keys(connection).length > 0 ? { connection } : {}),
    ...withPayloadKeys(env),
  };
}

function withPayloadKeys(env: NodeJS.ProcessEnv): { payloadKeys?: PayloadKeys } {
  const payloadKeys = payloadKeysFromEnv(env);
  return payloadKeys ? { payloadKeys } : {};
}

export function webUiUrl(address: string, namespace: string, workflowId?: string, env: NodeJS.ProcessEnv = process.env): string {
  const base = env.TEMPORAL_UI_URL || `http://${address.split(':')[0]}:8233`;
  return workflowId ? `${base}/namespaces/${namespace}/workflows/${encodeURIComponent(workflowId)}` : `${base}/namespaces/${namespace}/workflows`;
}
