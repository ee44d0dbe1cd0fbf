/**
 * The notifier's activities (docs/operating.md "Told when a run needs you"), on the run's database queue:
 * read what the run's ledger recorded since the last look, and deliver one moment to one target —
 * a webhook POST (only to a URL prefix on the worker's BACKFILL_WEBHOOK_URLS, redirects refused,
 * 10 s at most, an `Idempotency-Key` header) or `pg_notify` on the run's database — recording
 * every attempt's outcome in the ledger. Temporal retries a failed delivery; a receiver that
 * refuses it for good (a 4xx) or a URL off the allow-list is not retried.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityDeps } from '../activities/deps';
import { recordDelivery, runMoments, wasDelivered, type RunMoments } from '../ledger/notifications';
import { targetLabel, type NotifyTarget } from '../specs/notify-schema';
import type { Moment } from './moments';
import { chatBody, jsonBody } from './message';

export interface DeliveryInput {
  database: string;
  runId: string;
  name: string;
  moment: Moment;
  target: NotifyTarget;
  /** Its place in the spec's `notify:` (two webhooks may share an origin). */
  targetIndex: number;
}

export function notifyActivities(deps: ActivityDeps) {
  return {
    async readRunMoments(input: { database: string; runId: string; afterSeq: string }): Promise<RunMoments> {
      return runMoments(deps.pools.get(input.database), input.runId, input.afterSeq);
    },

    async deliverNotification(input: DeliveryInput): Promise<'delivered' | 'refused'> {
      const pool = deps.pools.get(input.database);
      const target = targetLabel(input.target, input.targetIndex);
      const at = { runId: input.runId, eventKey: input.moment.key, kind: input.moment.kind, target };
      // a retry after an answer that was lost: it arrived once, it is not sent again
      if (await wasDelivered(pool, input.runId, input.moment.key, target)) return 'delivered';
      const key = `${input.runId}/${input.moment.key}`;
      const body = jsonBody(input.name, input.runId, key, input.moment);
      if (input.target.channel !== undefined) {
        await pool.query('SELECT pg_notify($1, $2)', [input.target.channel, JSON.stringify(body)]);
        await recordDelivery(pool, { ...at, status: 'delivered' });
        return 'delivered';
      }
      const url = input.target.webhook!;
      const allowed = deps.trust.webhookUrls ?? [];
      if (!allowed.some((prefix) => url.startsWith(prefix))) {
        const why = `${target} is not on this worker's BACKFILL_WEBHOOK_URLS (${allowed.length > 0 ? allowed.join(', ') : 'empty'}): add its URL prefix where the worker is started`;
        await recordDelivery(pool, { ...at, status: 'refused', error: why });
        return 'refused';
      }
      const payload = input.target.format === 'chat' ? chatBody(input.moment) : body;
      let failure: { message: string; final: boolean } | undefined;
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key, 'User-Agent': 'backfill-notify' },
          body: JSON.stringify(payload),
          signal: AbortSignal.timeout(10_000),
          redirect: 'error',
        });
        await response.body?.cancel().catch(() => undefined);
        // a 4xx other than 408 and 429 will not change on its own: not retried
        if (!response.ok)
          failure = {
            message: `${target} answered ${response.status}`,
            final: response.status >= 400 && response.status < 500 && ![408, 429].includes(response.status),
          };
      } catch (err) {
        failure = { message: `${target} could not be reached: ${(err as Error).message}`, final: false };
      }
      if (!failure) {
        await recordDelivery(pool, { ...at, status: 'delivered' });
        return 'delivered';
      }
      await recordDelivery(pool, { ...at, status: 'failing', error: failure.message });
      if (failure.final) throw ApplicationFailure.nonRetryable(failure.message, 'NotificationRefused');
      throw new Error(failure.message);
    },
  };
}
