/**
 * The operator console in headless Chromium (origin/console/, docs/console.md): a signed-in tab on
 * a route, its page errors collected, and reading a failure banner once it says what a test expects.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { waitFor } from './origin.js';

export interface ConsoleTab {
  page: Page;
  context: BrowserContext;
  /** Page errors and console errors other than a refused fetch (4xx), in order. */
  errors: string[];
}

/** A console tab at `width` × `height`, signed in with `token`, on route `hash` (e.g. `#/sale/1`). */
export async function openConsole(
  browser: Browser,
  originUrl: string,
  token: string,
  hash: string,
  { width = 1280, height = 900 }: { width?: number; height?: number } = {},
): Promise<ConsoleTab> {
  const context = await browser.newContext({ viewport: { width, height }, locale: 'en-GB' });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (m) => {
    if (process.env.DEBUG_CONSOLE) console.log('page:', m.type(), m.text());
    if (m.type() === 'error' && !/status of 40[0-9]/.test(m.text())) errors.push(m.text());
  });
  await page.goto(`${originUrl}/admin/console/`);
  await page.waitForSelector('#login:not([hidden])');
  await page.fill('#login-token', token);
  await page.press('#login-token', 'Enter');
  await page.waitForSelector('#who:not([hidden])');
  await page.goto(`${originUrl}/admin/console/${hash}`);
  return { page, context, errors };
}

/** Banner `id`'s text (its paragraphs joined by one space), asserted once it matches `pattern`. */
export async function readBanner(page: Page, id: string, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  const selector = `#alerts .alert[data-alert="${id}"]`;
  await page.waitForSelector(selector, { timeout: timeoutMs });
  const read = async () =>
    (
      await page
        .locator(selector)
        .innerText()
        .catch(() => '')
    ).replace(/\s*\n+\s*/g, ' ');
  const text = await waitFor(read, (t) => pattern.test(t), timeoutMs).catch(async () => read());
  expect(text).toMatch(pattern);
  return text;
}
