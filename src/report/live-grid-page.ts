/**
 * The live grid's one page: no dependencies, no requests but its own `state.json`. Each
 * partition is a cell coloured by its state (its `data-state` says it too, for scripts and
 * tests), linking to its partition workflow in the Temporal Web UI; hovering shows its bounds,
 * rows and, for a failure, the message and the key range it stopped at. Below: rows/s and each
 * guard's readings over the last ten minutes.
 */

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function liveGridPage(run: { runId: string; name: string }): string {
  const title = escapeHtml(`${run.name}/${run.runId}`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${title} — partitions</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1f2328; }
  h1 { font-size: 1.2em; margin: 0 0 .3em; }
  #line { margin-bottom: .8em; }
  #stale { color: #cf222e; }
  .legend span { display: inline-block; margin-right: 1em; }
  .legend i, .cell { display: inline-block; width: 14px; height: 14px; border-radius: 2px; }
  .legend i { vertical-align: -2px; margin-right: .3em; }
  #grid { display: flex; flex-wrap: wrap; gap: 2px; margin: .8em 0 1.2em; }
  .s-pending { background: #d0d7de; } .s-running { background: #54aeff; } .s-held { background: #d4a72c; }
  .s-succeeded { background: #2da44e; } .s-failed { background: #cf222e; } .s-cancelled { background: #8c959f; } .s-reverted { background: #8250df; }
  svg { border: 1px solid #d0d7de; background: #f6f8fa; }
  .chart { margin-right: 1.5em; display: inline-block; vertical-align: top; }
</style>
</head>
<body>
<h1>${title}</h1>
<div id="line">reading the ledger…</div>
<div class="legend" id="legend"></div>
<div id="grid"></div>
<div id="charts"></div>
<script>
const STATES = ['pending', 'running', 'held', 'succeeded', 'failed', 'cancelled', 'reverted'];
const FINISHED = ['succeeded', 'failed', 'cancelled'];
const cells = new Map();
const grid = document.getElementById('grid');
const fmt = (n) => n === null || n === undefined ? '—' : Number(n).toLocaleString('en-US');
const dur = (s) => s === null ? '—' : s < 90 ? Math.round(s) + ' s' : s < 5400 ? Math.round(s / 60) + ' min' : (s / 3600).toFixed(1) + ' h';

function titleOf(c) {
  return [c.id, c.bounds, c.state + ': ' + fmt(c.rowsRead) + ' rows read, ' + fmt(c.rowsWritten) + ' written', c.note, c.errorRange ? 'stopped at ' + c.errorRange : null]
    .filter(Boolean).join('\\n');
}

function draw(state) {
  document.getElementById('line').textContent =
    state.status.toUpperCase() + (state.paused ? ' (paused)' : '') + ' — ' + fmt(state.rowsRead) + ' rows read, ' + fmt(state.rowsWritten) +
    ' written' + (state.rowsPerSecond ? ', ' + fmt(state.rowsPerSecond) + ' rows/s, ETA ' + dur(state.etaSeconds) : '') + ' · updated ' + new Date(state.at).toLocaleTimeString();
  const run = document.createElement('a');
  run.href = state.runUrl; run.textContent = ' run in the Temporal Web UI'; run.target = '_blank';
  document.getElementById('line').append(' ·', run);
  document.getElementById('legend').innerHTML = STATES.filter((s) => state.counts[s] > 0)
    .map((s) => '<span><i class="s-' + s + '"></i>' + s + ' ' + fmt(state.counts[s]) + '</span>').join('');
  for (const c of state.cells) {
    let el = cells.get(c.id);
    if (!el) {
      el = document.createElement('a');
      el.dataset.id = c.id; el.href = c.workflowUrl; el.target = '_blank';
      cells.set(c.id, el); grid.append(el);
    }
    if (el.dataset.state !== c.state) { el.dataset.state = c.state; el.className = 'cell s-' + c.state; }
    el.title = titleOf(c);
  }
  drawCharts(state.series);
}

function polyline(points, w, h, max) {
  if (points.length === 0) return '';
  const step = points.length > 1 ? w / (points.length - 1) : 0;
  return points.map((v, i) => (i * step).toFixed(1) + ',' + (h - (max ? (v / max) * (h - 4) : 0) - 2).toFixed(1)).join(' ');
}

function chart(label, values, color) {
  const w = 360, h = 80, max = Math.max(...values, 0);
  return '<div class="chart"><div>' + label + ' (max ' + fmt(max) + ')</div><svg width="' + w + '" height="' + h + '"><polyline fill="none" stroke="' + color +
    '" stroke-width="2" points="' + polyline(values, w, h, max) + '"/></svg></div>';
}

function drawCharts(series) {
  const guards = [...new Set(series.flatMap((p) => Object.keys(p.guards)))];
  document.getElementById('charts').innerHTML = chart('rows/s, 10 s buckets', series.map((p) => p.rowsPerSecond), '#0969da') +
    guards.map((g) => chart('guard ' + g.replace(/[<&]/g, ''), series.map((p) => p.guards[g] ?? 0), '#bf8700')).join('');
}

async function tick() {
  let finished = false;
  try {
    const res = await fetch('state.json', { cache: 'no-store' });
    const state = await res.json();
    if (!res.ok) throw new Error(state.error);
    draw(state);
    finished = FINISHED.includes(state.status);
  } catch (err) {
    document.getElementById('line').innerHTML = '<span id="stale">' + String(err.message || err).replace(/[<&]/g, '') + ' — showing the last picture</span>';
  }
  setTimeout(tick, finished ? 5000 : 1000);
}
tick();
</script>
</body>
</html>
`;
}
