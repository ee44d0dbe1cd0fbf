/**
 * One wrapper over each activity of a set, each keeping its key and its function's name:
 * Temporal registers activities by their keys and logs them by their function names.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- activities take and return anything serializable
export type Activity = (...args: any[]) => Promise<unknown>;

export function mapActivities<T extends Record<string, Activity>>(
  activities: T,
  wrap: (name: string, activity: Activity, args: unknown[]) => Promise<unknown>,
): T {
  const wrapped: Record<string, Activity> = {};
  for (const [name, activity] of Object.entries(activities)) {
    wrapped[name] = {
      async [name](...args: unknown[]) {
        return wrap(name, activity, args);
      },
    }[name];
  }
  return wrapped as T;
}
