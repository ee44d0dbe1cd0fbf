/**
 * A worker-wide `notify:` (BACKFILL_NOTIFY, the same list a spec takes, as JSON): the targets a
 * run is told to when its spec names none, so an operator sets the team's channel once. Read at
 * the worker's start; a list the schema refuses stops the worker, saying what is wrong.
 */
import { notifySchema, type NotifyTarget } from '../specs/notify-schema';

export function notifyDefaultFromEnv(env: NodeJS.ProcessEnv = process.env): NotifyTarget[] | undefined {
  const text = env.BACKFILL_NOTIFY?.trim();
  if (!text) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(
      `BACKFILL_NOTIFY is not JSON (${(err as Error).message}): give the targets as a spec's notify: list, e.g. [{"webhook": "https://hooks.example.com/…", "format": "chat"}]`,
    );
  }
  const parsed = notifySchema.safeParse(value);
  if (!parsed.success)
    throw new Error(
      `BACKFILL_NOTIFY: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'the list'} ${i.message}`).join('; ')} (docs/operating.md "Told when a run needs you")`,
    );
  return parsed.data;
}

/** What a run's opening carries of it (workflows/run-state.ts RunOpening.notify). */
export function withWorkerNotify(targets: NotifyTarget[] | undefined): { notify?: NotifyTarget[] } {
  return targets?.length ? { notify: targets } : {};
}
