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

/**
 * A group of small partitions run by one workflow: named by its first member, its size and a
 * hash of every member, so a relaunch of other members (a lost workflow task, replayed with a
 * member settled meanwhile) is a workflow of its own, never refused as the first one's.
 */
export function partitionGroupWorkflowId(name: string, runId: string, partitionIds: readonly string[]): string {
  return `${runWorkflowId(name, runId)}/group/${partitionIds[0]}+${partitionIds.length}-${fnv1a(partitionIds.join('\n'))}`;
}

/**
 * The task queue of the workers that serve one database through one variable, from the
 * deployment's base queue, the variable a spec names and the identity of the database it
 * reached when the run was planned (`<system identifier>:<database oid>`, src/db/identity.ts):
 * `backfill.ORDERS_DB.db-7251398472915273621-16384`. A run's partitions and activities go there,
 * so only a worker that may use that variable, and whose own connection through it reaches that
 * database, ever takes them: two workers whose variables name different clusters never share a
 * queue. Derived, never configured: the client and every worker compute it from what the
 * database says of itself.
 */
export function databaseTaskQueue(baseQueue: string, variable: string, databaseIdentity: string): string {
  return `${baseQueue}.${variable}.db-${databaseIdentity.replace(':', '-')}`;
}

const RANGE_PAD = 9;
/** Enough digits for the planner's MAX_PARTITIONS (100,000), so ids sort in plan order. */
const LIST_PAD = 6;
/** Pieces of one leaf: a leaf is cut into at most MAX_PARTITIONS of them, but rarely more than a few hundred. */
const SPLIT_PAD = 3;

function padInteger(value: string): string {
  const negative = value.startsWith('-');
  const digits = negative ? value.slice(1) : value;
  return (negative ? '-' : '') + digits.padStart(RANGE_PAD, '0');
}

/**
 * `id:000100000-000200000`, `day:2024-03-01`, `hour:2024-03-01T05`, `tenant#00003`, `region:null`.
 * A list partition is named by its place in the plan, never by its value: values are row
 * data (a customer, an e-mail domain) and workflow ids are visible to everyone with access
 * to the Temporal namespace; the value stays in the ledger. Places cannot collide, where a
 * readable prefix plus a short hash could.
 */
export function partitionId(bounds: PartitionBounds, timeUnit?: string, ordinal = 0): string {
  switch (bounds.kind) {
    case 'range':
      return `${bounds.column}:${padInteger(bounds.lo)}-${padInteger(bounds.hi)}`;
    case 'time':
      return `${timeLabel(timeUnit)}:${timeValue(bounds.timeZone ? localIso(bounds.lo, bounds.timeZone) : bounds.lo, timeUnit)}`;
    case 'list':
      return `${bounds.column}#${String(ordinal + 1).padStart(LIST_PAD, '0')}`;
    case 'leaf':
      // a leaf's name is schema, not data; a piece of it is named by its place in the leaf
      return bounds.split ? `leaf:${bounds.leaf}~${String(bounds.split.piece).padStart(SPLIT_PAD, '0')}` : `leaf:${bounds.leaf}`;
    case 'span':
      // its bounds are row data too: named by place, `id~000003`
      return `${bounds.column}~${String(ordinal + 1).padStart(LIST_PAD, '0')}`;
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

/** An instant as the wall-clock time of `zone`, `YYYY-MM-DDTHH:MM`: a partition is named by its zone's own day. */
function localIso(iso: string, zone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  }).formatToParts(new Date(iso));
  const part = (type: string) => parts.find((p) => p.type === type)!.value;
  return `${part('year')}-${part('month')}-${part('day')}T${part('hour')}:${part('minute')}`;
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
