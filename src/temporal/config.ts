/**
 * Where Temporal is, from the environment (README "Configuration"): TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, BACKFILL_TASK_QUEUE, TEMPORAL_UI_URL. Read at the edges only (the
 * worker entry, the CLI, the demo); everything below them receives a config object.
 */
export interface TemporalConfig {
  address: string;
  namespace: string;
  taskQueue: string;
}

export function temporalConfig(env: NodeJS.ProcessEnv = process.env): TemporalConfig {
  return {
    address: env.TEMPORAL_ADDRESS || '127.0.0.1:7233',
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.BACKFILL_TASK_QUEUE || 'backfill',
  };
}

export function webUiUrl(address: string, namespace: string, workflowId?: string, env: NodeJS.ProcessEnv = process.env): string {
  const base = env.TEMPORAL_UI_URL || `http://${address.split(':')[0]}:8233`;
  return workflowId ? `${base}/namespaces/${namespace}/workflows/${encodeURIComponent(workflowId)}` : `${base}/namespaces/${namespace}/workflows`;
}
