/** Sizes, counts and durations in words for operators. */

/** Decimal units, one decimal below 10. */
export function bytes(b: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (b >= 1000 && i < units.length - 1) {
    b /= 1000;
    i++;
  }
  return `${b.toFixed(b < 10 && i > 0 ? 1 : 0)} ${units[i]}`;
}

/** A whole number with thousands separators. */
export const count = (x: number): string => Math.round(x).toLocaleString('en-US');

/** Seconds up to two minutes, minutes up to two hours, then hours. */
export function duration(s: number): string {
  if (s < 120) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  if (s < 7200) return `${(s / 60).toFixed(0)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
