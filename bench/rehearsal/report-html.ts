/**
 * report.html: one self-contained page — inline CSS and inline SVG charts drawn here, no script,
 * no CDN, no network — with the verdict, key figures, the funnel, throughput over time and latency
 * percentiles per outcome.
 */
import type { Report } from './report-shape.js';
import { SERIES, type Series } from './recorder.js';
import { shadowRunHtml } from './report-ramp.js';
import { stackCostText } from './stack-cost.js';

const esc = (x: unknown) =>
  String(x).replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch]!);
const n = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x.toLocaleString('en-US'));
export const settleText = (ms: number | null) =>
  ms === null ? 'not settled' : ms < 500 ? '< 0.5 s (kept pace)' : `${(ms / 1000).toFixed(2)} s`;
const sec = (ms: number | null) => (ms === null ? '—' : `${(ms / 1000).toFixed(2)} s`);

const COLORS: Record<Series, string> = {
  reserved: '#1a9850',
  repeat: '#66bd63',
  ok: '#4575b4',
  rejected: '#fdae61',
  busy: '#d73027',
  failed: '#7b3294',
};
const KIND_COLOR = { in: '#4575b4', reject: '#f46d43', pass: '#1a9850', end: '#7570b3' } as const;

/** Horizontal bars on a log scale (counts span 1 to millions), each labelled with its count. */
function funnelSvg(r: Report): string {
  const rows = r.funnel;
  const W = 1100;
  const labelW = 380;
  const barW = W - labelW - 110;
  const rowH = 24;
  const H = rows.length * rowH + 10;
  const max = Math.max(1, ...rows.map((x) => x.count));
  const scale = (c: number) => (c <= 0 ? 0 : (Math.log10(c + 1) / Math.log10(max + 1)) * barW);
  const bars = rows
    .map((row, i) => {
      const y = i * rowH + 5;
      const w = Math.max(row.count > 0 ? 2 : 0, scale(row.count));
      const indent = row.kind === 'reject' || row.kind === 'end' ? 18 : 0;
      return `<text x="${labelW - 8}" y="${y + 16}" text-anchor="end" class="lbl">${esc(row.label)}</text>
<rect x="${labelW + indent}" y="${y + 3}" width="${Math.max(0, w - indent)}" height="${rowH - 7}" fill="${KIND_COLOR[row.kind]}" rx="2"/>
<text x="${labelW + Math.max(w, indent) + 6}" y="${y + 16}" class="num">${n(row.count)}</text>`;
    })
    .join('\n');
  return `<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="funnel">${bars}</svg>
<p class="hint">Bar length is logarithmic (counts range from a handful to millions); the figure is exact.
Blue: what came in · orange: refused at a layer · green: got through · purple: how orders ended.</p>`;
}

function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/** The two charts over time: 1100 px wide, `H` high, with room for the axes' labels left and below. */
const timeChart = (H: number) => ({ W: 1100, H, L: 70, R: 20, T: 20, B: 50 });

/** Horizontal grid lines at 0, ¼, ½, ¾ and all of `yMax`, each labelled with its value. */
function yGrid(chart: ReturnType<typeof timeChart>, yMax: number, Y: (v: number) => number): string {
  const { W, L, R } = chart;
  return [0, 0.25, 0.5, 0.75, 1]
    .map(
      (f) =>
        `<line x1="${L}" x2="${W - R}" y1="${Y(f * yMax)}" y2="${Y(f * yMax)}" class="grid"/><text x="${L - 6}" y="${Y(f * yMax) + 4}" text-anchor="end" class="ax">${n(f * yMax)}</text>`,
    )
    .join('');
}

/** Requests per second by outcome, stacked, over seconds since the sale's start. */
function throughputSvg(r: Report): string {
  // Long runs: average per-second counts over bins so ~300 steps remain (a 20-minute sale is unreadable per second).
  const bin = Math.max(1, Math.ceil(r.timeline.length / 300));
  const t: Report['timeline'] = [];
  for (let i = 0; i < r.timeline.length; i += bin) {
    const chunk = r.timeline.slice(i, i + bin);
    const avg = Object.fromEntries(SERIES.map((k) => [k, chunk.reduce((s, p) => s + p[k], 0) / bin])) as Record<
      Series,
      number
    >;
    t.push({ second: chunk[0]!.second, ...avg });
  }
  if (t.length === 0) return '<p>No requests.</p>';
  const chart = timeChart(340);
  const { W, H, L, R, T, B } = chart;
  const x0 = t[0]!.second;
  const x1 = t.at(-1)!.second + bin;
  const totals = t.map((p) => SERIES.reduce((s, k) => s + p[k], 0));
  const yMax = niceMax(Math.max(...totals));
  const X = (sec: number) => L + ((sec - x0) / Math.max(1, x1 - x0)) * (W - L - R);
  const Y = (v: number) => H - B - (v / yMax) * (H - T - B);
  const base = new Array(t.length).fill(0) as number[];
  const layers = SERIES.map((k) => {
    const lower = [...base];
    t.forEach((p, i) => (base[i]! += p[k]));
    if (t.every((p) => p[k] === 0)) return '';
    let d = '';
    t.forEach(
      (p, i) =>
        (d += `${i === 0 ? 'M' : 'L'}${X(p.second).toFixed(1)},${Y(base[i]!).toFixed(1)} L${X(p.second + bin).toFixed(1)},${Y(base[i]!).toFixed(1)} `),
    );
    for (let i = t.length - 1; i >= 0; i--)
      d += `L${X(t[i]!.second + bin).toFixed(1)},${Y(lower[i]!).toFixed(1)} L${X(t[i]!.second).toFixed(1)},${Y(lower[i]!).toFixed(1)} `;
    return `<path d="${d}Z" fill="${COLORS[k]}" fill-opacity="0.85"/>`;
  }).join('\n');
  const yTicks = yGrid(chart, yMax, Y);
  const stepX = niceMax((x1 - x0) / 10);
  let xTicks = '';
  for (let s = Math.ceil(x0 / stepX) * stepX; s <= x1; s += stepX)
    xTicks += `<line x1="${X(s)}" x2="${X(s)}" y1="${H - B}" y2="${H - B + 5}" class="axl"/><text x="${X(s)}" y="${H - B + 18}" text-anchor="middle" class="ax">${s}</text>`;
  const marks: string[] = [];
  const mark = (ms: number | null, label: string, color: string, dy: number) => {
    if (ms === null) return;
    const x = X(ms / 1000);
    marks.push(
      `<line x1="${x}" x2="${x}" y1="${T}" y2="${H - B}" stroke="${color}" stroke-dasharray="5,4" stroke-width="1.5"/><text x="${x + 4}" y="${T + 12 + dy}" class="mark" fill="${color}">${esc(label)}</text>`,
    );
  };
  mark(0, 'sale starts', '#333', 0);
  mark(r.figures.timeToSoldOutMs, `sold out ${sec(r.figures.timeToSoldOutMs)}`, '#d73027', 16);
  const legend = SERIES.map(
    (k, i) =>
      `<rect x="${L + i * 150}" y="${H - 18}" width="12" height="12" fill="${COLORS[k]}"/><text x="${L + i * 150 + 17}" y="${H - 8}" class="ax">${legendName[k]}</text>`,
  ).join('');
  return `<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="throughput">
${yTicks}${layers}${marks.join('')}
<line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" class="axl"/>${xTicks}
<text x="${W - R}" y="${H - B + 32}" text-anchor="end" class="ax">seconds since the sale's start</text>
<text x="14" y="${T + (H - T - B) / 2}" transform="rotate(-90 14 ${T + (H - T - B) / 2})" text-anchor="middle" class="ax">requests / s${bin > 1 ? ` (${bin}-s average)` : ''}</text>
${legend}</svg>`;
}

/** Cumulative reservations granted at the edge vs orders in MySQL: how far settlement trails the sale. */
function settlementSvg(r: Report): string {
  const pts = r.settledOverTime.filter(([t]) => t >= 0);
  if (r.timeline.length === 0) return '';
  const reserved: [number, number][] = [];
  let sum = 0;
  for (const p of r.timeline) {
    if (p.second < 0) continue;
    sum += p.reserved;
    reserved.push([(p.second + 1) * 1000, sum]);
  }
  const chart = timeChart(280);
  const { W, H, L, R, T, B } = chart;
  const xMax = Math.max(1000, ...reserved.map(([t]) => t), ...pts.map(([t]) => t));
  const yMax = niceMax(Math.max(1, r.figures.stock, ...pts.map(([, v]) => v), sum));
  const X = (ms: number) => L + (ms / xMax) * (W - L - R);
  const Y = (v: number) => H - B - (v / yMax) * (H - T - B);
  const line = (data: [number, number][], color: string, dash = '') =>
    data.length === 0
      ? ''
      : `<polyline fill="none" stroke="${color}" stroke-width="2.5" ${dash ? `stroke-dasharray="${dash}"` : ''} points="${[[0, 0] as [number, number], ...data].map(([t, v]) => `${X(t).toFixed(1)},${Y(v).toFixed(1)}`).join(' ')}"/>`;
  const yTicks = yGrid(chart, yMax, Y);
  const stepS = niceMax(xMax / 1000 / 10);
  let xTicks = '';
  for (let sec = 0; sec <= xMax / 1000; sec += stepS)
    xTicks += `<text x="${X(sec * 1000)}" y="${H - B + 18}" text-anchor="middle" class="ax">${sec}</text>`;
  const stockLine = `<line x1="${L}" x2="${W - R}" y1="${Y(r.figures.stock)}" y2="${Y(r.figures.stock)}" stroke="#999" stroke-dasharray="3,3"/><text x="${W - R - 4}" y="${Y(r.figures.stock) - 5}" text-anchor="end" class="ax">stock ${n(r.figures.stock)}</text>`;
  const legend = `<rect x="${L}" y="${H - 18}" width="12" height="12" fill="#1a9850"/><text x="${L + 17}" y="${H - 8}" class="ax">reserved at the edge (202, cumulative)</text>
<rect x="${L + 280}" y="${H - 18}" width="12" height="12" fill="#4575b4"/><text x="${L + 297}" y="${H - 8}" class="ax">orders in MySQL (settled)</text>`;
  return `<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="settlement">${yTicks}${stockLine}
${line(reserved, '#1a9850')}${line(pts, '#4575b4', '7,4')}
<line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" class="axl"/>${xTicks}
<text x="${W - R}" y="${H - B + 32}" text-anchor="end" class="ax">seconds since the sale's start</text>${legend}</svg>`;
}

const legendName: Record<Series, string> = {
  reserved: 'reserved (202)',
  repeat: 'repeat (200 same)',
  ok: 'other 2xx',
  rejected: '4xx refused',
  busy: '503 busy/unavailable',
  failed: '5xx / network',
};

/** p50 / p90 / p99 (and max tick) per outcome, log-scale ms. */
function latencySvg(r: Report): string {
  const rows = r.outcomes.filter((o) => o.count > 0).slice(0, 18);
  if (rows.length === 0) return '';
  const W = 1100;
  const labelW = 300;
  const rowH = 26;
  const T = 30;
  const H = T + rows.length * rowH + 30;
  const lo = 0.1;
  const hi = niceMax(Math.max(...rows.map((o) => o.max), 1));
  const X = (ms: number) => labelW + (Math.log10(Math.max(lo, ms) / lo) / Math.log10(hi / lo)) * (W - labelW - 170);
  let grid = '';
  for (let v = lo; v <= hi * 1.001; v *= 10)
    grid += `<line x1="${X(v)}" x2="${X(v)}" y1="${T - 6}" y2="${H - 24}" class="grid"/><text x="${X(v)}" y="${H - 8}" text-anchor="middle" class="ax">${v >= 1 ? n(v) : v} ms</text>`;
  const bars = rows
    .map((o, i) => {
      const y = T + i * rowH;
      return `<text x="${labelW - 8}" y="${y + 15}" text-anchor="end" class="lbl">${esc(`${o.step} ${o.status} ${o.code}`)} <tspan class="dim">(${n(o.count)})</tspan></text>
<rect x="${labelW}" y="${y + 3}" width="${X(o.p99) - labelW}" height="16" fill="#fdae61"/>
<rect x="${labelW}" y="${y + 3}" width="${X(o.p90) - labelW}" height="16" fill="#abd9e9"/>
<rect x="${labelW}" y="${y + 3}" width="${X(o.p50) - labelW}" height="16" fill="#4575b4"/>
<line x1="${X(o.max)}" x2="${X(o.max)}" y1="${y + 1}" y2="${y + 21}" stroke="#d73027" stroke-width="2"/>
<text x="${Math.min(X(o.max) + 6, W - 150)}" y="${y + 15}" class="tiny">p50 ${o.p50.toFixed(1)} · p99 ${o.p99.toFixed(1)}</text>`;
    })
    .join('\n');
  const legend = `<rect x="${labelW}" y="6" width="12" height="12" fill="#4575b4"/><text x="${labelW + 16}" y="16" class="ax">p50</text>
<rect x="${labelW + 60}" y="6" width="12" height="12" fill="#abd9e9"/><text x="${labelW + 76}" y="16" class="ax">p90</text>
<rect x="${labelW + 120}" y="6" width="12" height="12" fill="#fdae61"/><text x="${labelW + 136}" y="16" class="ax">p99</text>
<line x1="${labelW + 184}" x2="${labelW + 184}" y1="5" y2="19" stroke="#d73027" stroke-width="2"/><text x="${labelW + 190}" y="16" class="ax">max</text>`;
  return `<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="latency">${legend}${grid}${bars}</svg>`;
}

export function renderHtml(r: Report): string {
  const f = r.figures;
  const st = r.settlement;
  const card = (label: string, value: string) =>
    `<div class="card"><div class="v">${esc(value)}</div><div class="k">${esc(label)}</div></div>`;
  const outcomeRows = r.outcomes
    .map(
      (o) =>
        `<tr><td>${esc(o.step)}</td><td>${o.status}</td><td>${esc(o.code)}</td><td>${n(o.count)}</td><td>${o.p50}</td><td>${o.p90}</td><td>${o.p99}</td><td>${o.max}</td></tr>`,
    )
    .join('');
  const checks = st.reconciliation.checks
    .map(
      (c) =>
        `<tr class="${c.ok ? '' : 'bad'}"><td>${esc(c.name)}</td><td>${n(c.expected)}</td><td>${n(c.actual)}</td><td>${c.ok ? 'ok' : 'MISMATCH'}</td></tr>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Rehearsal ${esc(r.activityId)} — ${r.verdict.ok ? 'ok' : 'FAILED'}</title>
<style>
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1150px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.verdict{padding:10px 14px;border-radius:6px;font-weight:600;margin:12px 0}
.ok{background:#e6f4ea;color:#1e6b34}.fail{background:#fde8e6;color:#a1221b}
.cards{display:flex;flex-wrap:wrap;gap:10px}.card{border:1px solid #ddd;border-radius:6px;padding:8px 12px;min-width:150px}
.card .v{font-size:20px;font-weight:600}.card .k{color:#666;font-size:12px}
table{border-collapse:collapse;font-size:13px}td,th{border-bottom:1px solid #eee;padding:3px 10px;text-align:right}
td:first-child,th:first-child,td:nth-child(3){text-align:left} tr.bad td{color:#a1221b;font-weight:600}
svg text{font-family:system-ui,sans-serif} .lbl{font-size:13px;fill:#222}.num{font-size:12px;fill:#222;font-weight:600}
.ax{font-size:11px;fill:#555}.tiny{font-size:10px;fill:#444}.dim{fill:#888}.mark{font-size:12px;font-weight:600}
.grid{stroke:#e6e6e6}.axl{stroke:#888}.hint{color:#666;font-size:12px;margin:4px 0}
code{background:#f4f4f4;padding:1px 4px;border-radius:3px}
</style></head><body>
<h1>Flash-sale rehearsal</h1>
<div>${n(f.users)} users · ${n(f.stock)} units · curve <b>${esc(r.options.curve)}</b> over ${r.options.durationMs / 1000} s · activity ${esc(r.activityId)} · ${esc(r.startedAt)} · ${r.stack.own ? 'own stack (origin child + Miniflare edge)' : `edge ${esc(r.stack.edgeUrl)}`}</div>
<div><code>${esc(r.command)}</code></div>
<div class="verdict ${r.verdict.ok ? 'ok' : 'fail'}">${r.verdict.ok ? 'OK — nothing oversold, nothing lost, reconciliation ok' : 'FAILED'}${r.verdict.problems.map((p) => `<div>${esc(p)}</div>`).join('')}</div>
${r.verdict.notes.map((x) => `<div class="hint">note: ${esc(x)}</div>`).join('')}
${r.shadowRun ? shadowRunHtml(r.shadowRun) : ''}
<div class="cards">
${card('time to sold out', sec(f.timeToSoldOutMs))}
${card('edge requests / s (avg)', n(f.edgeRequestsPerSecond))}
${card('peak requests / s', n(f.peakRequestsPerSecond))}
${card('purchase p99', `${f.purchaseP99Ms.toFixed(1)} ms`)}
${card('time to settle (after the last reservation)', settleText(f.settleMs))}
${card('orders / stock', `${n(st.orders.total)} / ${n(f.stock)}`)}
${card('users with 2 orders', n(st.usersWithTwoOrders))}
${card('lost reservations', n(st.lostCount))}
${card('edge requests', n(f.edgeRequests))}
${card('reconciliation', st.reconciliation.ok ? 'ok' : 'MISMATCH')}
</div>
<h2>Funnel</h2>${funnelSvg(r)}
<h2>Throughput at the edge</h2>${throughputSvg(r)}
<h2>Reserved vs settled</h2>${settlementSvg(r)}
<h2>Latency percentiles per outcome (ms, log scale)</h2>${latencySvg(r)}
<table><tr><th>step</th><th>status</th><th>code</th><th>count</th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr>${outcomeRows}</table>
<h2>Settlement and reconciliation</h2>
<div>Orders ${n(st.orders.total)}: paid ${n(st.orders.paid)}, timed out ${n(st.orders.timeout)}, pending ${n(st.orders.pending)}; dead letters ${n(st.deadLetters)}; settled ${settleText(st.settleMs)} after the last reservation.</div>
<table><tr><th>check</th><th>expected</th><th>actual</th><th></th></tr>${checks}</table>
<h2>Load context (is the generator or the machine the limit?)</h2>${loadTable(r)}
</body></html>`;
}

/** The generator's own CPU and event loop, the machine, and the stack's processes over the load. */
function loadTable(r: Report): string {
  const l = r.load.summary;
  const pct = (x: number) => `${Math.round(x * 100)} %`;
  const rows = [
    [
      `load generator (${r.load.generators.length} process(es))`,
      `CPU mean ${pct(l.generatorCpuMean)}, max ${pct(l.generatorCpuMax)} of a core; event-loop delay p99 up to ${l.loopDelayP99MaxMs.toFixed(0)} ms`,
    ],
    [
      `machine (${l.cores} cores)`,
      `CPU mean ${pct(l.machineCpuMean)}, max ${pct(l.machineCpuMax)}; load average up to ${l.load1Max.toFixed(1)}`,
    ],
    ...Object.entries(l.procs).map(([name, p]) => [
      name,
      `CPU mean ${pct(p.cpuMean)}, max ${pct(p.cpuMax)} of a core; RSS up to ${p.rssMbMax} MB`,
    ]),
    ...(r.stackCost ? [['CPU per unit of work', stackCostText(r.stackCost)]] : []),
  ];
  return `<table>${rows.map(([k, v]) => `<tr><td>${esc(k!)}</td><td style="text-align:left">${esc(v!)}</td></tr>`).join('')}</table>${
    l.unreliable.length
      ? l.unreliable.map((u) => `<div class="hint"><b>unreliable figures:</b> ${esc(u)}</div>`).join('')
      : '<div class="hint">generator and machine below their limits: the figures are the stack\'s</div>'
  }`;
}
