/**
 * The moments a run can tell someone about (docs/operating.md "Told when a run needs you"), and those a
 * target gets when it names none. Plain data: the spec's schema and the notifier workflow share it.
 */
export const NOTIFY_EVENTS = ['started', 'held', 'paused', 'awaiting-approval', 'partition-failed', 'failed', 'succeeded', 'cancelled', 'reverted'] as const;
export type NotifyEventKind = (typeof NOTIFY_EVENTS)[number];

/** What needs a person, and the end. */
export const DEFAULT_NOTIFY_EVENTS: readonly NotifyEventKind[] = [
  'held',
  'paused',
  'awaiting-approval',
  'partition-failed',
  'failed',
  'succeeded',
  'cancelled',
  'reverted',
];

/** Minutes a run is held before `held` is told, unless the target says otherwise. */
export const DEFAULT_HELD_MINUTES = 15;
