/**
 * Links into the Temporal Web UI for what a command shows: a run's workflow, and the list of
 * run workflows (one spec's, or one status's). From TEMPORAL_UI_URL (or the address's host on
 * port 8233) and TEMPORAL_NAMESPACE, as `start` prints them: no connection is made.
 */
import type { RunSummary } from '../operations/status';
import { runWorkflowId } from '../domain/ids';
import { temporalConfig, webUiUrl } from '../temporal/config';

export function runLink(workflowId: string, config = temporalConfig()): string {
  return webUiUrl(config.address, config.namespace, workflowId);
}

/** The Web UI's list of run workflows, filtered as `backfill list` was: by spec name and status (the run's search attributes). */
export function runListLink(filter: { name?: string; status?: string } = {}): string {
  const config = temporalConfig();
  const quoted = (v: string) => `"${v.replace(/["\\]/g, '\\$&')}"`;
  const clauses = [
    'WorkflowType="backfillRunWorkflow"',
    ...(filter.name ? [`BackfillName=${quoted(filter.name)}`] : []),
    ...(filter.status ? [`BackfillStatus=${quoted(filter.status)}`] : []),
  ];
  return `${webUiUrl(config.address, config.namespace)}?query=${encodeURIComponent(clauses.join(' AND '))}`;
}

/** Each run of a list with its link. */
export function withLinks(list: RunSummary[]): RunSummary[] {
  const config = temporalConfig();
  return list.map((r) => ({ ...r, webUi: runLink(runWorkflowId(r.name, r.runId), config) }));
}
