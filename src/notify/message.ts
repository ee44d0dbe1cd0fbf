/**
 * A moment as a receiver reads it: `chat` is `{"text": …}`, the body Slack, Mattermost and
 * Rocket.Chat incoming webhooks take as it is; `json` (and every NOTIFY payload) is the moment
 * as an object with its idempotency key. Neither carries row data.
 */
import type { Moment } from './moments';

export interface NotificationBody {
  idempotencyKey: string;
  run: string;
  name: string;
  event: Moment['kind'];
  text: string;
  detail: Record<string, unknown>;
}

export function jsonBody(name: string, runId: string, idempotencyKey: string, m: Moment): NotificationBody {
  return { idempotencyKey, run: runId, name, event: m.kind, text: m.text, detail: m.detail };
}

export function chatBody(m: Moment): { text: string } {
  return { text: `backfill: ${m.text}` };
}
