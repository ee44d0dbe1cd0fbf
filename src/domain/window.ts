/**
 * Allowed hours (`limits.window`): the local times of day, in an IANA time zone, during
 * which a run may write. A window whose end is before its start wraps midnight
 * (22:00–06:00). Pure and workflow-safe: the time is always passed in.
 */
export interface AllowedWindow {
  /** HH:MM, inclusive. */
  start: string;
  /** HH:MM, exclusive. */
  end: string;
  /** IANA time zone, e.g. Europe/Berlin. */
  timeZone: string;
}

const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$/;

function minutes(hhmm: string): number {
  const m = HHMM.exec(hhmm)!;
  return Number(m[1]) * 60 + Number(m[2]);
}

/** Which field of the window is invalid and why, or undefined. */
export function windowProblem(w: AllowedWindow): { field: 'start' | 'end' | 'timeZone'; message: string } | undefined {
  if (!HHMM.test(w.start)) return { field: 'start', message: `must be HH:MM on a 24-hour clock (got "${w.start}")` };
  if (!HHMM.test(w.end)) return { field: 'end', message: `must be HH:MM on a 24-hour clock (got "${w.end}")` };
  if (w.start === w.end) return { field: 'end', message: 'equals start; omit the window to allow all hours' };
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: w.timeZone });
  } catch {
    return { field: 'timeZone', message: `must be an IANA time zone such as Europe/Berlin or UTC (got "${w.timeZone}")` };
  }
  return undefined;
}

/** Minutes since local midnight in the window's time zone. */
function localMinutes(at: Date, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(at);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return get('hour') * 60 + get('minute');
}

/** Milliseconds until the window opens: 0 when `at` is inside it. */
export function msUntilOpen(w: AllowedWindow, at: Date): number {
  const now = localMinutes(at, w.timeZone);
  const start = minutes(w.start);
  const end = minutes(w.end);
  const inside = start < end ? now >= start && now < end : now >= start || now < end;
  if (inside) return 0;
  const wait = (start - now + 1440) % 1440;
  // to the start of the opening minute, not the current second's position within it
  return Math.max(1000, wait * 60_000 - at.getUTCSeconds() * 1000 - at.getUTCMilliseconds());
}

export function describeWindow(w: AllowedWindow): string {
  return `${w.start}–${w.end} ${w.timeZone}`;
}
