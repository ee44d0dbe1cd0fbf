/**
 * The moments of a run a person may need to hear about, read from what its ledger recorded
 * (docs/operating.md "Told when a run needs you"), and the message each makes: counts, ids, reasons and
 * links, never row data (the ledger's messages hold none; its error details, which do, are not
 * read). Pure and workflow-safe: the notifier workflow decides with it.
 */
import { DEFAULT_HELD_MINUTES, DEFAULT_NOTIFY_EVENTS, type NotifyEventKind } from '../domain/notify-events';
import type { NotifyTarget } from '../specs/notify-schema';
import type { RunMoments } from '../ledger/notifications';

/** What the notifier reads each look (ledger/notifications.ts runMoments). */
export type RunMomentsLike = RunMoments;

export interface Moment {
  /** The same for every target and every retry: with the run id, the receiver's idempotency key. */
  key: string;
  kind: NotifyEventKind;
  text: string;
  detail: Record<string, unknown>;
}

export const FINISHED = ['succeeded', 'failed', 'cancelled'];

/** The moments in `m` not yet told: new ledger events, partitions failed since (each once per attempt). */
export function momentsOf(run: { name: string; runId: string }, m: RunMomentsLike, told: ReadonlySet<string>): Moment[] {
  const label = `${run.name}/${run.runId}`;
  const out: Moment[] = [];
  for (const e of m.events) {
    const moment = eventMoment(label, m, e);
    if (moment && !told.has(moment.key)) out.push(moment);
  }
  for (const f of m.failed) {
    const key = `partition-failed:${f.partitionId}:${f.attempt}`;
    if (told.has(key)) continue;
    out.push({
      key,
      kind: 'partition-failed',
      text: `${label}: partition ${f.partitionId} failed${f.range ? ` (${f.range})` : ''}: ${f.error ?? 'no message'}. See: backfill partitions ${run.runId} --status failed`,
      detail: { partition: f.partitionId, error: f.error, range: f.range },
    });
  }
  return out;
}

/** The moments in the order a person should hear them: a run's end after whatever it found (failed partitions are read beside the events, after them). */
export function inTellingOrder(moments: Moment[]): Moment[] {
  const isEnd = (m: Moment) => m.key.startsWith('finished:');
  return [...moments.filter((m) => !isEnd(m)), ...moments.filter(isEnd)];
}

function eventMoment(label: string, m: RunMomentsLike, e: RunMomentsLike['events'][number]): Moment | undefined {
  const runId = label.split('/')[1];
  switch (e.kind) {
    case 'started':
      return {
        key: `started:${e.seq}`,
        kind: 'started',
        text: `${label} started${e.actor ? ` by ${e.actor}` : ''}${e.reason ? `: ${e.reason}` : ''}`,
        detail: {},
      };
    case 'canary-failed':
    case 'stage-failed':
      return { key: `paused:${e.seq}`, kind: 'paused', text: `${label} paused itself: ${e.reason ?? e.kind}`, detail: { by: e.kind } };
    case 'paused':
      // paused by itself (a guard held it too long), not by a person
      return e.actor?.startsWith('guard:') || e.actor === 'backfill'
        ? {
            key: `paused:${e.seq}`,
            kind: 'paused',
            text: `${label} paused itself (${e.actor}): ${e.reason ?? 'no reason recorded'}. Resume: backfill resume ${runId}`,
            detail: { by: e.actor },
          }
        : undefined;
    case 'canary-passed':
      // a canary that passed and waits for a person says so in its reason
      return e.reason
        ? { key: `awaiting-approval:${e.seq}`, kind: 'awaiting-approval', text: `${label} waits for approval: ${e.reason}`, detail: { by: 'canary' } }
        : undefined;
    case 'finished': {
      const status = String(e.detail?.status ?? m.status);
      // the ledger keys each attempt's end `finished-<attempt>`: an earlier attempt's end is not this one's
      const attempt = Number(/^finished-(\d+)$/.exec(e.key ?? '')?.[1] ?? m.attempt);
      if (!FINISHED.includes(status) || attempt !== m.attempt) return undefined;
      const kind: NotifyEventKind = status === 'succeeded' && m.reverts ? 'reverted' : (status as NotifyEventKind);
      const d = e.detail ?? {};
      const counts = `${grouped(Number(d.rowsWritten ?? 0))} rows written; partitions: ${Number(
        (d.byStatus as { succeeded?: number } | undefined)?.succeeded ?? 0,
      )} succeeded, ${Number((d.byStatus as { failed?: number } | undefined)?.failed ?? 0)} failed of ${Number(d.total ?? 0)}`;
      const what = kind === 'reverted' ? `reverted ${m.reverts}` : status;
      return {
        key: `finished:${attempt}`,
        kind,
        text: `${label} ${what}: ${counts}${status === 'failed' ? `. See: backfill status ${runId}` : ''}`,
        detail: {
          status,
          rowsWritten: d.rowsWritten ?? null,
          total: d.total ?? null,
          byStatus: d.byStatus ?? null,
          ...(m.reverts ? { reverts: m.reverts } : {}),
        },
      };
    }
    default:
      return undefined;
  }
}

/** A run held (a running partition not writing) since `since` (ms), now `now`: the moment for a target whose heldMinutes have passed. */
export function heldMoment(run: { name: string; runId: string }, held: RunMomentsLike['held'], since: number, now: number): Moment {
  const minutes = Math.floor((now - since) / 60_000);
  const reasons = [...new Set(held.map((h) => h.reason))];
  return {
    key: `held:${since}`,
    kind: 'held',
    text: `${run.name}/${run.runId} has been held for ${minutes} min: ${reasons.slice(0, 3).join('; ')} (${held.length} partition(s)). See: backfill status ${run.runId}`,
    detail: { minutes, partitions: held.length, reasons },
  };
}

/** 1234567 → 1,234,567 without Intl (the workflow sandbox). */
const grouped = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

export const eventsOf = (t: NotifyTarget): readonly NotifyEventKind[] => t.events ?? DEFAULT_NOTIFY_EVENTS;
export const heldMinutesOf = (t: NotifyTarget): number => t.heldMinutes ?? DEFAULT_HELD_MINUTES;
