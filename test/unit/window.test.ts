import { msUntilOpen, windowProblem } from '../../src/domain/window';
import { limitsChangeProblem } from '../../src/domain/limits';
import { parseSpecText } from '../../src/specs/load';

const at = (iso: string) => new Date(iso);

describe('allowed hours', () => {
  test('inside a same-day window nothing waits; before it, the wait runs to its start', () => {
    const w = { start: '09:00', end: '17:00', timeZone: 'UTC' };
    expect(msUntilOpen(w, at('2024-03-04T09:00:00Z'))).toBe(0);
    expect(msUntilOpen(w, at('2024-03-04T16:59:59Z'))).toBe(0);
    expect(msUntilOpen(w, at('2024-03-04T17:00:00Z'))).toBe(16 * 3600_000);
    expect(msUntilOpen(w, at('2024-03-04T08:30:00Z'))).toBe(30 * 60_000);
  });

  test('a window that wraps midnight is open late evening and early morning', () => {
    const w = { start: '22:00', end: '06:00', timeZone: 'UTC' };
    expect(msUntilOpen(w, at('2024-03-04T23:30:00Z'))).toBe(0);
    expect(msUntilOpen(w, at('2024-03-04T05:59:00Z'))).toBe(0);
    expect(msUntilOpen(w, at('2024-03-04T06:00:00Z'))).toBe(16 * 3600_000);
  });

  test('the window follows its time zone, daylight saving included', () => {
    const w = { start: '22:00', end: '06:00', timeZone: 'Europe/Berlin' };
    // 21:30 UTC is 22:30 in Berlin in winter (UTC+1) and 23:30 in summer (UTC+2)
    expect(msUntilOpen(w, at('2024-01-15T21:30:00Z'))).toBe(0);
    expect(msUntilOpen(w, at('2024-07-15T20:30:00Z'))).toBe(0);
    expect(msUntilOpen(w, at('2024-07-15T19:30:00Z'))).toBe(30 * 60_000);
  });

  test('bad windows are refused with the field and the fix', () => {
    expect(windowProblem({ start: '25:00', end: '06:00', timeZone: 'UTC' })).toEqual({
      field: 'start',
      message: 'must be HH:MM on a 24-hour clock (got "25:00")',
    });
    expect(windowProblem({ start: '22:00', end: '06:00', timeZone: 'Mars/Olympus' })).toEqual({
      field: 'timeZone',
      message: 'must be an IANA time zone such as Europe/Berlin or UTC (got "Mars/Olympus")',
    });
    expect(limitsChangeProblem({ actor: 'a', window: { start: '1:00', end: '06:00', timeZone: 'UTC' } })).toBe(
      'window.start must be HH:MM on a 24-hour clock (got "1:00")',
    );
    const spec = `name: a\nreason: r\ndatabase: D\nsource: { table: t, key: id }\npartition: { by: range, column: id, size: 10 }\ntransform: { name: t, version: 1, sql: "SELECT c.id FROM chunk c" }\ntarget: { table: t2, key: [id], mode: upsert }\nlimits:\n  window: { start: "22:00", end: "06:00", timeZone: Europe/Berln }\n`;
    expect(() => parseSpecText(spec, 's.yaml')).toThrow(
      'invalid spec s.yaml:9:53: limits.window.timeZone must be an IANA time zone such as Europe/Berlin or UTC (got "Europe/Berln")',
    );
  });
});
