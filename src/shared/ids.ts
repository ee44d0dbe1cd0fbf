/**
 * The one place that builds workflow ids and partition ids. Partition ids are derived
 * from their bounds only, so planning the same spec over the same data twice gives the
 * same ids, and a second start of the same partition child is refused by Temporal.
 */
import type { PartitionBounds } from './types';

export const RUN_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,39}$/;

export function runWorkflowId(name: string, runId: string): string {
  return `backfill/${name}/${runId}`;
}

export function partitionWorkflowId(name: string, runId: string, partitionId: string): string {
  return `${runWorkflowId(name, runId)}/${partitionId}`;
}

const RANGE_PAD = 9;

function padInteger(value: string): string {
  const negative = value.startsWith('-');
  const digits = negative ? value.slice(1) : value;
  return (negative ? '-' : '') + digits.padStart(RANGE_PAD, '0');
}

/** `id:000100000-000200000`, `day:2024-03-01`, `hour:2024-03-01T05`, `tenant:42`, `region:null`. */
export function partitionId(bounds: PartitionBounds, timeUnit?: string): string {
  switch (bounds.kind) {
    case 'range':
      return `${bounds.column}:${padInteger(bounds.lo)}-${padInteger(bounds.hi)}`;
    case 'time':
      return `${timeLabel(timeUnit)}:${timeValue(bounds.lo, timeUnit)}`;
    case 'list':
      return `${bounds.column}:${safeValue(bounds.value)}`;
    case 'null':
      return `${bounds.column}:null`;
  }
}

function timeLabel(unit: string | undefined): string {
  return unit === 'minute' || unit === 'hour' || unit === 'day' || unit === 'week' || unit === 'month' ? unit : 'time';
}

function timeValue(iso: string, unit: string | undefined): string {
  // iso is always YYYY-MM-DDTHH:MM:SS.sssZ from the planner
  switch (unit) {
    case 'month':
      return iso.slice(0, 7);
    case 'day':
    case 'week':
      return iso.slice(0, 10);
    case 'hour':
      return iso.slice(0, 13);
    default:
      return iso.slice(0, 16);
  }
}

/** Workflow ids are capped (255 in the compose config): long or odd list values become a readable prefix plus a hash. */
function safeValue(value: string): string {
  const clean = value.replace(/[^A-Za-z0-9._@-]/g, '_');
  if (clean === value && value.length <= 60 && value !== 'null') return value;
  return `${clean.slice(0, 40)}~${fnv1a(value)}`;
}

/** A small, stable, workflow-safe hash (FNV-1a, 32 bit) for ids; not for security. */
export function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}
