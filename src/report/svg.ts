/**
 * Small charts as inline SVG, so a report is one self-contained file that renders anywhere
 * (no script, no network). Each chart has a title, labelled axes and a legend where it needs
 * one; every text is escaped.
 */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export const PALETTE = ['#2f6fdf', '#2ca02c', '#ff7f0e', '#9467bd', '#d62728', '#8c564b', '#17becf', '#7f7f7f'];

const W = 640;
const H = 240;
const M = { left: 64, right: 16, top: 32, bottom: 40 };

/** 0, a round step, … up to at least max: axis ticks people read easily. */
export function niceTicks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const ticks: number[] = [];
  for (let v = 0; v < max + step / 2; v += step) ticks.push(Number(v.toPrecision(12)));
  if (ticks[ticks.length - 1] < max) ticks.push(ticks[ticks.length - 1] + step);
  return ticks;
}

export function compact(n: number): string {
  const abs = Math.abs(n);
  if (abs >= 1e9) return `${+(n / 1e9).toFixed(1)}G`;
  if (abs >= 1e6) return `${+(n / 1e6).toFixed(1)}M`;
  if (abs >= 1e3) return `${+(n / 1e3).toFixed(1)}k`;
  return `${+n.toFixed(2)}`;
}

function frame(title: string, kind: string, body: string, xLabel: string, yLabel: string): string {
  return (
    `<svg class="chart" data-chart="${escapeXml(kind)}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeXml(title)}">` +
    `<title>${escapeXml(title)}</title>` +
    `<text x="${M.left}" y="18" font-size="13" font-weight="600">${escapeXml(title)}</text>` +
    body +
    `<text x="${(M.left + W - M.right) / 2}" y="${H - 6}" font-size="11" text-anchor="middle" fill="#555">${escapeXml(xLabel)}</text>` +
    `<text transform="translate(14 ${(M.top + H - M.bottom) / 2}) rotate(-90)" font-size="11" text-anchor="middle" fill="#555">${escapeXml(yLabel)}</text>` +
    '</svg>'
  );
}

function yAxis(ticks: number[], y: (v: number) => number): string {
  return ticks
    .map(
      (t) =>
        `<line x1="${M.left}" x2="${W - M.right}" y1="${y(t)}" y2="${y(t)}" stroke="#e5e5e5"/><text x="${M.left - 6}" y="${y(t) + 4}" font-size="10" text-anchor="end" fill="#555">${compact(t)}</text>`,
    )
    .join('');
}

function xAxis(ticks: number[], x: (v: number) => number, label: (v: number) => string): string {
  const base = H - M.bottom;
  return (
    `<line x1="${M.left}" x2="${W - M.right}" y1="${base}" y2="${base}" stroke="#999"/>` +
    ticks.map((t) => `<text x="${x(t)}" y="${base + 14}" font-size="10" text-anchor="middle" fill="#555">${escapeXml(label(t))}</text>`).join('')
  );
}

function legend(names: string[]): string {
  return names
    .map(
      (n, i) =>
        `<rect x="${W - M.right - 150}" y="${M.top + i * 14 - 9}" width="10" height="10" fill="${PALETTE[i % PALETTE.length]}"/><text x="${W - M.right - 136}" y="${M.top + i * 14}" font-size="10">${escapeXml(n)}</text>`,
    )
    .join('');
}

/** A line over x; `xLabel` formats ticks. */
export function lineChart(o: {
  title: string;
  kind: string;
  points: [number, number][];
  xLabel: string;
  yLabel: string;
  xTick: (v: number) => string;
}): string {
  const maxX = Math.max(1, ...o.points.map((p) => p[0]));
  const yTicks = niceTicks(Math.max(0, ...o.points.map((p) => p[1])));
  const x = (v: number) => M.left + (v / maxX) * (W - M.left - M.right);
  const y = (v: number) => H - M.bottom - (v / yTicks[yTicks.length - 1]) * (H - M.top - M.bottom);
  const path = o.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' ');
  const body =
    yAxis(yTicks, y) +
    xAxis(
      niceTicks(maxX, 6).filter((t) => t <= maxX),
      x,
      o.xTick,
    ) +
    `<path d="${path}" fill="none" stroke="${PALETTE[0]}" stroke-width="2"/>`;
  return frame(o.title, o.kind, body, o.xLabel, o.yLabel);
}

/** Points coloured by a category (e.g. what governed each chunk's size). */
export function scatterChart(o: {
  title: string;
  kind: string;
  points: { x: number; y: number; group: string }[];
  xLabel: string;
  yLabel: string;
  xTick: (v: number) => string;
}): string {
  const groups = [...new Set(o.points.map((p) => p.group))].sort();
  const maxX = Math.max(1, ...o.points.map((p) => p.x));
  const yTicks = niceTicks(Math.max(0, ...o.points.map((p) => p.y)));
  const x = (v: number) => M.left + (v / maxX) * (W - M.left - M.right);
  const y = (v: number) => H - M.bottom - (v / yTicks[yTicks.length - 1]) * (H - M.top - M.bottom);
  const dots = o.points
    .map(
      (p) =>
        `<circle cx="${x(p.x).toFixed(1)}" cy="${y(p.y).toFixed(1)}" r="2.5" fill="${PALETTE[groups.indexOf(p.group) % PALETTE.length]}" fill-opacity="0.75"/>`,
    )
    .join('');
  const body =
    yAxis(yTicks, y) +
    xAxis(
      niceTicks(maxX, 6).filter((t) => t <= maxX),
      x,
      o.xTick,
    ) +
    dots +
    legend(groups);
  return frame(o.title, o.kind, body, o.xLabel, o.yLabel);
}

/** Stacked bars, one per category, series stacked in order. */
export function stackedBars(o: {
  title: string;
  kind: string;
  categories: string[];
  series: { name: string; values: number[] }[];
  xLabel: string;
  yLabel: string;
}): string {
  const totals = o.categories.map((_, i) => o.series.reduce((n, s) => n + s.values[i], 0));
  const yTicks = niceTicks(Math.max(0, ...totals));
  const band = (W - M.left - M.right) / Math.max(1, o.categories.length);
  const y = (v: number) => H - M.bottom - (v / yTicks[yTicks.length - 1]) * (H - M.top - M.bottom);
  let bars = '';
  o.categories.forEach((c, i) => {
    let base = 0;
    o.series.forEach((s, k) => {
      const v = s.values[i];
      if (v <= 0) return;
      bars += `<rect x="${(M.left + i * band + band * 0.1).toFixed(1)}" y="${y(base + v).toFixed(1)}" width="${Math.max(0.5, band * 0.8).toFixed(1)}" height="${(y(base) - y(base + v)).toFixed(1)}" fill="${PALETTE[k % PALETTE.length]}"><title>${escapeXml(`${c}: ${s.name} ${v}`)}</title></rect>`;
      base += v;
    });
  });
  const every = Math.ceil(o.categories.length / 8);
  const labels = o.categories
    .map((c, i) =>
      i % every === 0
        ? `<text x="${(M.left + i * band + band / 2).toFixed(1)}" y="${H - M.bottom + 14}" font-size="9" text-anchor="middle" fill="#555">${escapeXml(c.length > 14 ? `${c.slice(0, 13)}…` : c)}</text>`
        : '',
    )
    .join('');
  const body =
    yAxis(yTicks, y) +
    `<line x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}" stroke="#999"/>` +
    bars +
    labels +
    legend(o.series.map((s) => s.name));
  return frame(o.title, o.kind, body, o.xLabel, o.yLabel);
}

/** Bars side by side per category, one per series (before / after): small enough to repeat per column. */
export function groupedBars(o: {
  title: string;
  kind: string;
  categories: string[];
  series: { name: string; values: number[] }[];
  xLabel: string;
  yLabel: string;
  width?: number;
}): string {
  const yTicks = niceTicks(Math.max(0, ...o.series.flatMap((s) => s.values)));
  const band = (W - M.left - M.right) / Math.max(1, o.categories.length);
  const bar = (band * 0.8) / Math.max(1, o.series.length);
  const y = (v: number) => H - M.bottom - (v / yTicks[yTicks.length - 1]) * (H - M.top - M.bottom);
  let bars = '';
  o.categories.forEach((c, i) => {
    o.series.forEach((s, k) => {
      const v = s.values[i] ?? 0;
      bars += `<rect x="${(M.left + i * band + band * 0.1 + k * bar).toFixed(1)}" y="${y(v).toFixed(1)}" width="${bar.toFixed(1)}" height="${(y(0) - y(v)).toFixed(1)}" fill="${PALETTE[k % PALETTE.length]}"><title>${escapeXml(`${c}: ${s.name} ${v}`)}</title></rect>`;
    });
  });
  const labels = o.categories
    .map(
      (c, i) =>
        `<text x="${(M.left + i * band + band / 2).toFixed(1)}" y="${H - M.bottom + 14}" font-size="9" text-anchor="middle" fill="#555">${escapeXml(c)}</text>`,
    )
    .join('');
  const body =
    yAxis(yTicks, y) +
    `<line x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}" stroke="#999"/>` +
    bars +
    labels +
    legend(o.series.map((s) => s.name));
  return frame(o.title, o.kind, body, o.xLabel, o.yLabel);
}
