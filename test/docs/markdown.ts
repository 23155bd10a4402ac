/**
 * Just enough Markdown for the docs check: the links of a page and the anchors GitHub gives its
 * headings. Code (fenced blocks and inline spans) is skipped, as GitHub renders no links there.
 */

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return;
    }
    if (fence === undefined) out.push({ text, line: i + 1 });
  });
  return out;
}

const withoutCodeSpans = (text: string) => text.replace(/`+[^`]*`+/g, '');

/** Inline links `[text](target)` and images, with the line they are on. */
export function markdownLinks(markdown: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  for (const { text, line } of proseLines(markdown))
    for (const m of withoutCodeSpans(text).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      links.push({ target: m[1]!, line });
  return links;
}

/**
 * GitHub's heading anchor (as github-slugger makes it): the rendered text, lower-cased, with
 * punctuation and symbols removed and spaces turned into hyphens.
 */
export function githubSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images keep their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/`/g, '')
    .replace(/(\*\*|__|\*|\b_|_\b)/g, ''); // emphasis markers
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a page: its headings' slugs (repeats get -1, -2, … as on GitHub) and explicit ids. */
export function githubSlugs(markdown: string): Set<string> {
  const slugs = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) slugs.add(m[1]!);
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const base = githubSlug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    slugs.add(n === 0 ? base : `${base}-${n}`);
  }
  return slugs;
}
