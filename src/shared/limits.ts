/**
 * Validation of live limit changes, shared by the run workflow's update validator and
 * the CLI, so an operator gets the same reason from both. Workflow-safe.
 * The bounds match the spec schema's.
 */
import type { Limits, LimitsChange } from './types';
import { windowProblem } from './window';
import { guardsSchema } from '../specs/schema';

export const LIMIT_BOUNDS = {
  concurrency: { min: 1, max: 500 },
  chunkSize: { min: 1, max: 1_000_000 },
} as const;

/** Returns why the change is invalid, or undefined when it is valid. */
export function limitsChangeProblem(change: LimitsChange): string | undefined {
  const { concurrency, chunkSize, rowsPerSecond, window, targetChunkSeconds, guards } = change;
  if ([concurrency, chunkSize, rowsPerSecond, window, targetChunkSeconds, guards].every((v) => v === undefined)) {
    return 'no limit given; set at least one of concurrency, chunkSize, rowsPerSecond, window, targetChunkSeconds, guards';
  }
  if (targetChunkSeconds !== undefined && targetChunkSeconds !== null && !(targetChunkSeconds > 0)) {
    return `targetChunkSeconds must be a positive number, or null to turn adaptive sizing off (got ${targetChunkSeconds})`;
  }
  if (guards) {
    // the spec's own schema: a guard set live is checked exactly as one in a spec file
    const parsed = guardsSchema.safeParse(guards);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return `guards.${issue.path.join('.')} ${issue.message}`;
    }
  }
  if (window) {
    const problem = windowProblem({ ...window, timeZone: window.timeZone ?? 'UTC' });
    if (problem) return `window.${problem.field} ${problem.message}`;
  }
  for (const [name, value] of [['concurrency', concurrency], ['chunkSize', chunkSize]] as const) {
    if (value === undefined) continue;
    const { min, max } = LIMIT_BOUNDS[name];
    if (!Number.isInteger(value) || value < min || value > max) return `${name} must be an integer from ${min} to ${max} (got ${value})`;
  }
  if (rowsPerSecond !== undefined && rowsPerSecond !== null && !(typeof rowsPerSecond === 'number' && rowsPerSecond > 0 && Number.isFinite(rowsPerSecond))) {
    return `rowsPerSecond must be a positive number, or null to remove the cap (got ${rowsPerSecond})`;
  }
  return undefined;
}

export function applyLimitsChange(current: Limits, change: LimitsChange): Limits {
  const next: Limits = { concurrency: change.concurrency ?? current.concurrency, chunkSize: change.chunkSize ?? current.chunkSize };
  const rps = change.rowsPerSecond === undefined ? current.rowsPerSecond : change.rowsPerSecond;
  if (rps !== null && rps !== undefined) next.rowsPerSecond = rps;
  const window = change.window === undefined ? current.window : change.window;
  if (window) next.window = { ...window, timeZone: window.timeZone ?? 'UTC' };
  const target = change.targetChunkSeconds === undefined ? current.targetChunkSeconds : change.targetChunkSeconds;
  if (target) next.targetChunkSeconds = target;
  if (current.minChunkSize !== undefined) next.minChunkSize = current.minChunkSize;
  if (current.maxChunkSize !== undefined) next.maxChunkSize = current.maxChunkSize;
  const guards = change.guards === undefined ? current.guards : change.guards;
  if (guards) next.guards = guardsSchema.parse(guards);
  return next;
}
