/**
 * The spec's `notify:` (docs/operating.md "Told when a run needs you"): where a run's moments are sent —
 * a webhook (its URL must be on the worker's allow-list, BACKFILL_NOTIFY_ALLOW) as a chat
 * incoming-webhook body or plain JSON, or a PostgreSQL NOTIFY channel on the run's database —
 * and which moments. Messages carry counts, ids and reasons, never row data.
 */
import { z } from 'zod';
import { NOTIFY_EVENTS } from '../domain/notify-events';

export { NOTIFY_EVENTS, DEFAULT_NOTIFY_EVENTS, type NotifyEventKind } from '../domain/notify-events';

const events = z
  .array(z.enum(NOTIFY_EVENTS, { message: `must be some of ${NOTIFY_EVENTS.join(', ')}` }))
  .min(1, { message: 'must name at least one event, or be left out for the default' })
  .optional();
const heldMinutes = z
  .number({ message: 'must be a number of minutes' })
  .int({ message: 'must be a whole number of minutes' })
  .min(1, { message: 'must be at least 1 minute' })
  .max(1440, { message: 'must be at most 1440 minutes (a day)' })
  .optional();

/**
 * One target: `webhook:` (with `format: chat | json`) or `channel:`. One object with both keys
 * optional, not a union, so a mistake is named at its field rather than as "none of the forms".
 */
const target = z
  .strictObject({
    webhook: z
      .string()
      .url({ message: 'must be an http(s) URL' })
      .refine((u) => /^https?:\/\//.test(u), { message: 'must be an http(s) URL' })
      .optional(),
    /** A PostgreSQL NOTIFY channel on the run's database: `LISTEN backfill_events` to receive the JSON form. */
    channel: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, { message: 'must be a lowercase channel name ([a-z_][a-z0-9_]*)' })
      .optional(),
    /** `chat`: `{"text": …}`, as Slack, Mattermost and Rocket.Chat incoming webhooks take it; `json`: the moment as an object. */
    format: z.enum(['chat', 'json'], { message: 'must be chat or json' }).optional(),
    events,
    heldMinutes,
  })
  .refine((t) => (t.webhook === undefined) !== (t.channel === undefined), { message: 'names one target: webhook: URL, or channel: name' })
  .refine((t) => t.format === undefined || t.webhook !== undefined, { message: 'is for a webhook: a channel always gets the JSON form', path: ['format'] });

export const notifySchema = z
  .array(target)
  .min(1, { message: 'must list at least one target, or be left out' })
  .max(10, { message: 'must list at most 10 targets' });

export type NotifyTarget = z.infer<typeof notifySchema>[number];

/** A target's name in the ledger and in messages: its place in `notify:` and the channel, or the webhook's origin (its path may hold a token). */
export function targetLabel(t: NotifyTarget, index: number): string {
  return `#${index + 1} ${t.channel !== undefined ? `channel ${t.channel}` : `webhook ${new URL(t.webhook!).origin}`}`;
}
