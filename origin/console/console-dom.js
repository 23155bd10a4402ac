// @ts-check
// Small DOM and formatting helpers. Text always goes in as textContent, never as HTML: every figure
// and message shown comes from the origin, and nothing it says can become markup here.

/**
 * One of the page's elements, by its id. The ids name the console's own elements (index.html and the
 * ones it builds), so the type admits what the console uses of them: an input's value, a dialog's
 * showModal, a table's tBodies.
 * @type {(id: string) => PageElement}
 */
export const $ = (id) => /** @type {PageElement} */ (document.getElementById(id));
/** @typedef {HTMLInputElement & HTMLButtonElement & HTMLDialogElement & HTMLTableElement} PageElement */

/** `h('td', {class: 'n'}, 'text', childNode)`: an element with attributes and children. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (name === 'dataset') Object.assign(el.dataset, value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** Replaces an element's children only when the text they show changed (screen readers hear changes only). */
export function setText(el, text) {
  const value = String(text);
  if (el.textContent !== value) el.textContent = value;
}

/**
 * Makes `parent`'s children look like `items`, keeping each child whose markup did not change: a
 * focused button in an unchanged row keeps its focus, and a live region announces only what changed.
 */
export function replaceRows(parent, items) {
  const old = [...parent.children];
  if (old.length !== items.length) return parent.replaceChildren(...items);
  items.forEach((item, i) => {
    if (old[i].outerHTML !== item.outerHTML) old[i].replaceWith(item);
  });
}

/** "n/a" for a figure this origin does not export. */
export const NA = 'n/a';
export const num = (v, digits = 0) =>
  v === null || v === undefined || Number.isNaN(v)
    ? NA
    : Number(v).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });

/** Per-second rate between two readings of a running total; n/a when either is missing. */
export function rate(now, before, seconds) {
  if (now === null || now === undefined || before === null || before === undefined || !(seconds > 0)) return null;
  return Math.max(0, (now - before) / seconds);
}

export const pct = (part, whole) =>
  part === null || whole === null || !(whole > 0) ? NA : `${((part / whole) * 100).toFixed(1)} %`;

/** hh:mm:ss of a duration (ms), never negative. */
export function clock(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  const pad = (n) => String(n).padStart(2, '0');
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
}

export const timeOf = (iso) => new Date(iso).toLocaleTimeString('en-GB', { hour12: false });

/** The ask-before-acting dialog: resolves true on Confirm, false on Cancel or Escape. */
export function confirmAction(text) {
  const dialog = $('confirm');
  setText($('confirm-text'), text);
  return new Promise((resolve) => {
    const done = (ok) => {
      $('confirm-ok').removeEventListener('click', yes);
      $('confirm-cancel').removeEventListener('click', no);
      dialog.removeEventListener('cancel', no);
      if (dialog.open) dialog.close();
      resolve(ok);
    };
    const yes = () => done(true);
    const no = () => done(false);
    $('confirm-ok').addEventListener('click', yes);
    $('confirm-cancel').addEventListener('click', no);
    dialog.addEventListener('cancel', no);
    dialog.showModal();
    $('confirm-cancel').focus();
  });
}
