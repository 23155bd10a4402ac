/**
 * A shadow ramp's part of the report, as text (the printed summary) and as an HTML section
 * (report.html): per step the rate planned, offered and served and the layers that gave way, the
 * verdict "first to give way", whether the guard stopped the run and why, each switch's time to
 * effect, and the cleanup checklist.
 */
import { DRILL_EFFECT_LIMIT_MS } from './drill.js';
import type { StepReport } from './ramp.js';
import type { ShadowRun } from './report-shape.js';

const esc = (x: unknown) =>
  String(x).replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch]!);
const rate = (x: number) => Math.round(x).toLocaleString('en-US');
const ms = (x: number | null) => (x === null ? '—' : `${Math.round(x).toLocaleString('en-US')} ms`);

function stepRows(run: ShadowRun): StepReport[] {
  return [...run.ramp.steps, ...(run.ramp.drillPhase ? [run.ramp.drillPhase] : [])];
}

export function guardText(run: ShadowRun): string {
  const g = run.guard;
  const how =
    g.baseline.source === 'assumed'
      ? `assumed: ${g.baseline.answers} real answers before the first step`
      : g.baseline.source === 'measured'
        ? `measured over ${g.baseline.answers} real answers before the first step`
        : 'given';
  const base = `real success baseline ${(g.baseline.rate * 100).toFixed(1)} %, ${how}`;
  return g.stoppedEarly
    ? `STOPPED EARLY at ${ms(g.atMs)} after the sale's start: ${g.reason} (${base})`
    : `did not stop the run (${base})`;
}

export function shadowRunLines(run: ShadowRun): string[] {
  const out: string[] = [
    '',
    `Shadow ramp to ${run.ramp.peakFactor} × the planned peak ${rate(run.ramp.plannedPeak)} req/s`,
  ];
  out.push('  step          planned    offered     served  gave way');
  for (const s of stepRows(run))
    out.push(
      `  ${s.label.padEnd(12)} ${rate(s.targetRate).padStart(8)} ${rate(s.offeredRate).padStart(10)} ${rate(s.servedRate).padStart(10)}  ${s.gaveWay.map((g) => `${g.layer} (${g.why})`).join('; ') || '—'}${s.underOffered && s.label !== 'drill' ? ' [offered < 80 % of planned]' : ''}`,
    );
  out.push(`  first to give way: ${run.ramp.verdict.text}`);
  out.push(`  guard: ${guardText(run)}`);
  if (run.drill) {
    out.push(
      `  switch drill (bar ${DRILL_EFFECT_LIMIT_MS / 1000} s from the admin answer: in effect after the last disobeying click was sent, by the first obeying answer):`,
    );
    for (const sw of run.drill.switches)
      out.push(
        `    ${sw.name.padEnd(44)} in effect by ${ms(sw.answeredMs).padStart(8)} (not before ${ms(sw.notBeforeMs)}; first obeying click sent at ${ms(sw.effectMs)}, ${sw.probes} probes)${sw.ok ? '' : ' FAILED'}${sw.note ? ` — ${sw.note}` : ''}`,
      );
    out.push(`  SWITCH DRILL: ${run.drill.ok ? 'ok' : `FAILED — ${run.drill.failures.join('; ')}`}`);
  } else out.push('  switch drill: not run');
  const c = run.cleanup;
  if (c) {
    out.push(
      `  CLEANUP: ${c.done ? 'ok' : 'FAILED'} — ${c.cleaned ? 'cleaned up' : `not cleaned up (${c.error})`}; ${c.paidAtEnd} orders paid at the end; reconciled at the cleanup: ${c.reconciledAtCleanup === null ? '—' : c.reconciledAtCleanup ? 'yes' : 'NO'}`,
    );
    for (const i of c.checklist?.items ?? [])
      out.push(`    [${i.ok ? 'x' : ' '}] ${i.label}: ${i.detail}${checklistNote(i.id)}`);
  }
  return out;
}

/** The checklist's reconciliation item after a shadow cleanup: the removed rows cannot add up. */
const checklistNote = (id: string) =>
  id === 'reconciled' ? ' (after a shadow cleanup its rows are gone: the cleanup’s own reconciliation counts)' : '';

export function shadowRunHtml(run: ShadowRun): string {
  const steps = stepRows(run)
    .map(
      (s) =>
        `<tr class="${s.gaveWay.length ? 'bad' : ''}"><td>${esc(s.label)}</td><td>${rate(s.targetRate)}</td><td>${rate(s.offeredRate)}</td><td>${rate(s.servedRate)}</td><td>${s.redis.p99Ms === null ? '—' : s.redis.p99Above ? `&gt; ${s.redis.p99Ms}` : `≤ ${s.redis.p99Ms}`}</td><td>${s.stream.backlogEnd}</td><td>${s.settlement.behindEnd}</td><td style="text-align:left">${esc(s.gaveWay.map((g) => `${g.layer}: ${g.why}`).join('; ') || '—')}</td></tr>`,
    )
    .join('');
  const switches = (run.drill?.switches ?? [])
    .map(
      (sw) =>
        `<tr class="${sw.ok ? '' : 'bad'}"><td>${esc(sw.name)}</td><td>${ms(sw.notBeforeMs)}</td><td>${ms(sw.answeredMs)}</td><td>${ms(sw.effectMs)}</td><td>${sw.probes}</td><td style="text-align:left">${sw.ok ? 'ok' : 'FAILED'}${sw.note ? ` — ${esc(sw.note)}` : ''}</td></tr>`,
    )
    .join('');
  const c = run.cleanup;
  const items = (c?.checklist?.items ?? [])
    .map(
      (i) =>
        `<tr class="${i.ok ? '' : 'bad'}"><td>${esc(i.label)}</td><td style="text-align:left">${i.ok ? 'ok' : 'NO'} — ${esc(i.detail)}</td></tr>`,
    )
    .join('');
  return `<h2>Shadow ramp: first to give way</h2>
<div class="verdict ${run.ramp.verdict.first ? 'fail' : 'ok'}">${esc(run.ramp.verdict.text)}</div>
<div class="verdict ${run.guard.stoppedEarly ? 'fail' : 'ok'}">Guard: ${esc(guardText(run))}</div>
<table><tr><th>step</th><th>planned req/s</th><th>offered</th><th>served</th><th>Redis p99 ms</th><th>Stream backlog</th><th>not yet settled</th><th>gave way</th></tr>${steps}</table>
<h2>Switch drill (bar ${DRILL_EFFECT_LIMIT_MS / 1000} s)</h2>
${run.drill ? `<div class="verdict ${run.drill.ok ? 'ok' : 'fail'}">${run.drill.ok ? 'every switch obeyed within the bar' : esc(run.drill.failures.join('; '))}</div><table><tr><th>switch</th><th>not before</th><th>in effect by</th><th>first obeying click sent</th><th>probes</th><th></th></tr>${switches}</table>` : '<p>Not run.</p>'}
<h2>Cleanup of the shadow sale</h2>
${c ? `<div class="verdict ${c.done ? 'ok' : 'fail'}">${c.cleaned ? 'cleaned up' : `not cleaned up: ${esc(c.error)}`}; ${c.paidAtEnd} orders paid at the end</div><table>${items}</table>` : '<p>Not run.</p>'}`;
}
