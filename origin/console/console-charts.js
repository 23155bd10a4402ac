// @ts-check
// The sale view's charts (docs/console.md, "Charts"), drawn with uPlot (served by the origin as
// /admin/console/uplot.js, a classic script that defines the global `uPlot`; no CDN, no inline
// script). They show the series the origin keeps for the sale (`live.series`): the whole run at one
// point a second for the last minutes and coarser before. Each chart has a line of text with its
// newest figures, so what it says does not depend on seeing the colours; the lines also differ by
// dash pattern.
import { h, num, setText } from './console-dom.js';

/**
 * The element with this id (the page always has it).
 * @param {string} id
 * @returns {HTMLElement}
 */
function byId(id) {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the console page has no #${id}`);
  return found;
}

/**
 * @typedef {object} SeriesView
 * @property {{ fine: number, coarse: number }} resolution
 * @property {number[]} t each point's end, Unix seconds
 * @property {number[]} dur seconds each point covers
 * @property {Record<string, (number | null)[]>} series per-second counts and gauges by name
 * @property {(number | null)[]} successRate decided ÷ all answers per point
 * @property {(number | null)[][]} buckets units left per bucket
 */
/**
 * @typedef {object} LiveCharts what the charts read of the live view
 * @property {SeriesView | null} series
 * @property {number | null} baseline the rehearsal's success rate (0–1)
 * @property {{ startsAt: string, endsAt: string }} config
 */
/**
 * @typedef {object} Line one series of a chart
 * @property {string} label
 * @property {string} stroke
 * @property {number[]} [dash]
 * @property {string} [scale]
 * @property {(v: number | null) => string} [fmt]
 */
/**
 * @typedef {object} ChartSpec
 * @property {string} id
 * @property {string} title
 * @property {(s: SeriesView, live: LiveCharts) => Line[]} lines
 * @property {(s: SeriesView, live: LiveCharts) => (number | null)[][]} data one array per line
 * @property {Record<string, { range?: [number, number] }>} [scales]
 * @property {{ scale: string, label: string }[]} [axes] the y axes (left, then right)
 */

/** @type {any} */
const uPlotLib = /** @type {any} */ (globalThis).uPlot;

const HEIGHT = 180;
const COLORS = ['#0b57d0', '#b3261e', '#146c2e', '#8e4ec6', '#b06000', '#00677d', '#5f6368', '#c2185b'];
const DASHES = [[], [8, 4], [2, 3], [10, 3, 2, 3], [4, 4], [14, 4], [1, 2], [6, 2, 2, 2]];

/** @param {number | null} v */
const perSecond = (v) => (v === null ? 'n/a' : `${num(v, 1)}/s`);
/** @param {number | null} v */
const count = (v) => (v === null ? 'n/a' : num(v));
/** @param {number | null} v */
const percent = (v) => (v === null ? 'n/a' : `${num(v, 1)} %`);

/**
 * Line `i` of a chart: its colour and dash.
 * @param {number} i
 * @param {string} label
 * @param {Partial<Line>} [more]
 * @returns {Line}
 */
const line = (i, label, more = {}) => ({
  label,
  stroke: COLORS[i % COLORS.length] ?? '#000',
  dash: DASHES[i % DASHES.length] ?? [],
  ...more,
});

const FUNNEL = ['clicks', 'tickets', 'admitted', 'reserved', 'settled', 'paid'];

/** The backlog's growth per second between points. @param {SeriesView} s */
function growth(s) {
  const b = s.series.backlog ?? [];
  return b.map((v, i) => {
    const prev = i > 0 ? b[i - 1] : null;
    return v === null || v === undefined || prev === null || prev === undefined ? null : (v - prev) / (s.dur[i] || 1);
  });
}

/** @type {ChartSpec[]} */
const CHARTS = [
  {
    id: 'chart-funnel',
    title: 'Funnel per second: clicks → tickets → admitted → reserved → settled → paid',
    lines: () => FUNNEL.map((step, i) => line(i, step, { fmt: perSecond })),
    data: (s) => FUNNEL.map((step) => s.series[step] ?? []),
  },
  {
    id: 'chart-success',
    title: 'Order success rate against the baseline and the 80 % alert line',
    lines: () => [
      line(0, 'success rate', { fmt: percent }),
      line(6, 'baseline', { fmt: percent, dash: [6, 3] }),
      line(1, 'alert below (80 % of baseline)', { fmt: percent, dash: [2, 3] }),
    ],
    data: (s, live) => [
      s.successRate.map((v) => (v === null ? null : v * 100)),
      s.t.map(() => (live.baseline === null ? null : live.baseline * 100)),
      s.t.map(() => (live.baseline === null ? null : live.baseline * 80)),
    ],
    scales: { y: { range: [0, 105] } },
  },
  {
    id: 'chart-backlog',
    title: 'Stream backlog (pending + undelivered) and its growth per second',
    lines: () => [line(0, 'backlog', { fmt: count }), line(1, 'growth', { fmt: perSecond, scale: 'g' })],
    data: (s) => [s.series.backlog ?? [], growth(s)],
    axes: [
      { scale: 'y', label: 'reservations' },
      { scale: 'g', label: 'per second' },
    ],
  },
  {
    id: 'chart-redis',
    title: 'Redis pressure: slow-log entries per second and connected clients',
    lines: () => [line(1, 'slow log', { fmt: perSecond, scale: 'g' }), line(0, 'clients', { fmt: count })],
    data: (s) => [s.series.slowlog ?? [], s.series.redisClients ?? []],
    axes: [
      { scale: 'y', label: 'clients' },
      { scale: 'g', label: 'slow log /s' },
    ],
  },
  {
    id: 'chart-mysql',
    title: 'MySQL pressure: threads running, connected, pool in use of its limit, slow queries per second',
    lines: () => [
      line(0, 'threads running', { fmt: count }),
      line(2, 'threads connected', { fmt: count }),
      line(3, 'pool in use', { fmt: count }),
      line(6, 'pool limit', { fmt: count, dash: [6, 3] }),
      line(1, 'slow queries', { fmt: perSecond }),
    ],
    data: (s) =>
      ['mysqlRunning', 'mysqlConnected', 'poolInUse', 'poolLimit', 'slowQueries'].map((n) => s.series[n] ?? []),
  },
  {
    id: 'chart-units',
    title: 'Units left per bucket',
    lines: (s) =>
      s.buckets.length > 1
        ? [
            line(0, 'all buckets', { fmt: count }),
            ...s.buckets.map((_, b) => line(b + 1, `bucket ${b}`, { fmt: count })),
          ]
        : [line(0, 'units left', { fmt: count })],
    data: (s) => (s.buckets.length > 1 ? [s.series.unitsLeft ?? [], ...s.buckets] : [s.series.unitsLeft ?? []]),
  },
];

/**
 * @typedef {object} Drawn
 * @property {any} plot the uPlot instance
 * @property {string} key the lines it was made with
 * @property {HTMLElement} box
 */
/** @type {Map<string, Drawn>} */
const drawn = new Map();
/** @type {ResizeObserver | null} */
let resizer = null;
/** @type {{ startsAt: number, endsAt: number }} */
const marks = { startsAt: 0, endsAt: 0 };

/** The sale's start and end as dashed vertical lines, labelled. @param {any} u */
function drawMarks(u) {
  /** @type {CanvasRenderingContext2D} */
  const ctx = u.ctx;
  const { left, top, width, height } = u.bbox;
  ctx.save();
  ctx.strokeStyle = '#59636e';
  ctx.fillStyle = '#59636e';
  ctx.setLineDash([4, 4]);
  ctx.font = `${Math.round(11 * devicePixelRatio)}px system-ui, sans-serif`;
  for (const [at, label] of /** @type {[number, string][]} */ ([
    [marks.startsAt, 'start'],
    [marks.endsAt, 'end'],
  ])) {
    const x = Math.round(u.valToPos(at, 'x', true));
    if (!(x >= left && x <= left + width)) continue;
    ctx.beginPath();
    ctx.moveTo(x, top);
    ctx.lineTo(x, top + height);
    ctx.stroke();
    ctx.fillText(label, x + 4, top + 12 * devicePixelRatio);
  }
  ctx.restore();
}

/** @param {HTMLElement} box */
const widthOf = (box) => Math.max(240, Math.floor(box.clientWidth));

/**
 * @param {ChartSpec} spec
 * @param {Line[]} lines
 * @param {HTMLElement} box
 */
function makePlot(spec, lines, box) {
  const axes = spec.axes ?? [{ scale: 'y', label: '' }];
  return new uPlotLib(
    {
      width: widthOf(box),
      height: HEIGHT,
      scales: { x: { time: true }, ...(spec.scales ?? {}) },
      series: [
        { label: 'time' },
        ...lines.map((l) => ({
          label: l.label,
          stroke: l.stroke,
          width: 2,
          dash: l.dash,
          scale: l.scale ?? 'y',
          spanGaps: false,
          points: { show: false },
          // The value under the cursor; without a cursor the line under the chart says the newest.
          value: (
            /** @type {any} */ _u,
            /** @type {number | null} */ v,
            /** @type {number} */ _si,
            /** @type {number | null} */ idx,
          ) => (idx === null || idx === undefined ? '—' : (l.fmt ?? count)(v)),
        })),
      ],
      axes: [
        {},
        ...axes.map((a, i) => ({
          scale: a.scale,
          label: a.label || undefined,
          side: i === 0 ? 3 : 1,
          grid: { show: i === 0 },
          size: 56,
        })),
      ],
      legend: { live: true },
      cursor: { drag: { x: true, y: false } },
      hooks: { draw: [drawMarks] },
    },
    [[], ...lines.map(() => [])],
    box,
  );
}

/** The newest value of each line, in words, under the chart. @param {Line[]} lines @param {(number | null)[][]} data */
function summary(lines, data) {
  return lines
    .map((l, i) => {
      const values = data[i] ?? [];
      const last = values.length ? (values[values.length - 1] ?? null) : null;
      return `${l.label} ${(l.fmt ?? count)(last)}`;
    })
    .join(' · ');
}

/** Builds the charts' boxes in #charts once. */
function ensureBoxes() {
  const root = byId('charts');
  if (root.childElementCount) return;
  root.append(
    ...CHARTS.map((spec) =>
      h(
        'figure',
        { class: 'chart', id: spec.id, 'aria-labelledby': `${spec.id}-title` },
        h('figcaption', { id: `${spec.id}-title` }, spec.title),
        h('div', { class: 'chart-plot' }),
        h('p', { class: 'chart-now', id: `${spec.id}-now` }),
      ),
    ),
  );
  resizer = new ResizeObserver(() => {
    for (const d of drawn.values()) {
      const w = widthOf(d.box);
      if (d.plot.width !== w) d.plot.setSize({ width: w, height: HEIGHT });
    }
  });
  for (const spec of CHARTS) resizer.observe(/** @type {HTMLElement} */ (byId(spec.id).querySelector('.chart-plot')));
}

/**
 * Draws (or updates) every chart from the live view.
 * @param {LiveCharts} live
 */
export function drawCharts(live) {
  const note = byId('charts-note');
  if (!uPlotLib) return setText(note, 'The chart library did not load (uplot.js).');
  const s = live.series;
  if (!s || s.t.length === 0)
    return setText(
      note,
      'No series yet: the origin keeps a sale’s series from CONSOLE_SERIES_LEAD_SECONDS before its start.',
    );
  setText(
    note,
    `${s.t.length} points, one a second${
      s.dur.some((d) => d >= s.resolution.coarse) ? `, older ones ${s.resolution.coarse} s each` : ''
    }. Dashed lines mark the start and the end.`,
  );
  ensureBoxes();
  marks.startsAt = Date.parse(live.config.startsAt) / 1000;
  marks.endsAt = Date.parse(live.config.endsAt) / 1000;
  for (const spec of CHARTS) {
    const lines = spec.lines(s, live);
    const data = spec.data(s, live);
    const key = lines.map((l) => l.label).join('|');
    const box = /** @type {HTMLElement} */ (byId(spec.id).querySelector('.chart-plot'));
    let d = drawn.get(spec.id);
    if (!d || d.key !== key) {
      d?.plot.destroy();
      d = { plot: makePlot(spec, lines, box), key, box };
      drawn.set(spec.id, d);
    }
    d.plot.setData([s.t, ...data]);
    setText(byId(`${spec.id}-now`), `Now: ${summary(lines, data)}`);
    box.dataset.points = String(s.t.length);
  }
}

/** Removes the charts (leaving the sale view). */
export function destroyCharts() {
  for (const d of drawn.values()) d.plot.destroy();
  drawn.clear();
  resizer?.disconnect();
  resizer = null;
  const root = document.getElementById('charts');
  root?.replaceChildren();
}

/**
 * A small sparkline on a canvas: `values` left to right, scaled to their maximum.
 * @param {HTMLCanvasElement} canvas
 * @param {(number | null)[]} values
 */
export function sparkline(canvas, values) {
  const ratio = devicePixelRatio || 1;
  const w = canvas.clientWidth || 120;
  const hgt = canvas.clientHeight || 28;
  canvas.width = Math.round(w * ratio);
  canvas.height = Math.round(hgt * ratio);
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  ctx.scale(ratio, ratio);
  ctx.clearRect(0, 0, w, hgt);
  ctx.strokeStyle = '#d0d7de';
  ctx.beginPath();
  ctx.moveTo(0, hgt - 0.5);
  ctx.lineTo(w, hgt - 0.5);
  ctx.stroke();
  const known = values.filter((v) => v !== null);
  if (known.length < 2) return;
  const max = Math.max(1, ...known.map(Number));
  ctx.strokeStyle = COLORS[0] ?? '#000';
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  let pen = false;
  values.forEach((v, i) => {
    if (v === null) return void (pen = false);
    const x = (i / Math.max(1, values.length - 1)) * (w - 2) + 1;
    const y = hgt - 2 - (v / max) * (hgt - 4);
    if (pen) ctx.lineTo(x, y);
    else ctx.moveTo(x, y);
    pen = true;
  });
  ctx.stroke();
}
