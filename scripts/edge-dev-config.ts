/**
 * The dev copy of wrangler.toml for `npm run edge` when an optional secret is set (why: see
 * scripts/edge-dev.ts).
 */
import { resolve } from 'node:path';

/**
 * wrangler.toml's text, runnable from another folder, declaring `extra` secrets too: `main` and the
 * assets directory become absolute paths. Throws if the file no longer has the lines it rewrites.
 */
export function devConfigWith(toml: string, root: string, extra: readonly string[]): string {
  const rewrite = (text: string, pattern: RegExp, replace: (m: RegExpExecArray) => string) => {
    const m = pattern.exec(text);
    if (!m) throw new Error(`wrangler.toml: no line matching ${pattern}; update scripts/edge-dev.ts`);
    return text.slice(0, m.index) + replace(m) + text.slice(m.index + m[0].length);
  };
  let text = rewrite(toml, /^main = "([^"]+)"$/m, (m) => `main = ${JSON.stringify(resolve(root, m[1]!))}`);
  text = rewrite(text, /^directory = "([^"]+)"$/m, (m) => `directory = ${JSON.stringify(resolve(root, m[1]!))}`);
  return rewrite(
    text,
    /^required = \[([^\]]*)\]$/m,
    (m) => `required = [${[m[1]!, ...extra.map((name) => JSON.stringify(name))].join(', ')}]`,
  );
}
