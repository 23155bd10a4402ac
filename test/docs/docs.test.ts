/**
 * The docs check: README and docs/ stay a short front page with deep pages that link to
 * each other correctly, docs/configuration.md lists exactly the settings the origin and the edge
 * read, and every design reference points at a heading of docs/design.md. Pure file reads: no Redis,
 * MySQL or workerd.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONFIG_NAMES } from '../../origin/platform/config.js';
import { EDGE_SECRET_NAMES } from '../../scripts/dev-defaults.js';
import { githubSlugs, markdownLinks } from './markdown.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const MAX_README_LINES = 300;

function docFiles(): string[] {
  const pages = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  return ['README.md', ...pages];
}

/** Every file of the repository (tracked or new, not ignored), as paths relative to the root. */
function repoFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return out.split('\0').filter((f) => f !== '' && existsSync(join(ROOT, f)) && statSync(join(ROOT, f)).isFile());
}

const slugCache = new Map<string, Set<string>>();
function anchorsOf(path: string): Set<string> {
  let slugs = slugCache.get(path);
  if (!slugs) {
    slugs = githubSlugs(read(path));
    slugCache.set(path, slugs);
  }
  return slugs;
}

describe('README', () => {
  it(`is at most ${MAX_README_LINES} lines`, () => {
    const lines = read('README.md').split('\n').length;
    expect(lines).toBeLessThanOrEqual(MAX_README_LINES);
  });
});

describe('links in README and docs/', () => {
  it('every relative link and #anchor resolves', () => {
    const broken: string[] = [];
    for (const file of docFiles()) {
      for (const { target, line } of markdownLinks(read(file))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: — not ours to check
        const [pathPart, anchor] = splitAnchor(target);
        const linked = pathPart === '' ? file : relative(ROOT, resolve(ROOT, dirname(file), pathPart));
        const where = `${file}:${line} → ${target}`;
        if (linked.startsWith('..')) {
          broken.push(`${where} (outside the repository)`);
          continue;
        }
        if (!existsSync(join(ROOT, linked))) {
          broken.push(`${where} (no such file)`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!linked.endsWith('.md')) broken.push(`${where} (an anchor into a file that is not markdown)`);
        else if (!anchorsOf(linked).has(decodeURIComponent(anchor))) broken.push(`${where} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('design references', () => {
  const design = read('docs/design.md');
  /** Section numbers of docs/design.md's "## N. Title" headings. */
  const sections = new Set([...design.matchAll(/^## (\d+)\. /gm)].map((m) => Number(m[1])));
  const designAnchors = anchorsOf('docs/design.md');

  it('docs/design.md has one numbered section per design section, 1 to 10', () => {
    expect([...sections].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('no file cites the old out-of-repo design document; every design § and design.md# reference resolves', () => {
    const bad: string[] = [];
    const oldReference = new RegExp(['DESIGN', '\\s*', '§'].join(''), 'g');
    for (const file of repoFiles()) {
      if (/\.(png|jpg|jpeg|gif|ico|woff2?|lockb?)$/.test(file) || file === 'package-lock.json') continue;
      const text = read(file);
      if (oldReference.test(text)) bad.push(`${file}: an unconverted design reference`);
      oldReference.lastIndex = 0;
      if (/\.\.\/shared\/|\/work\/shared|shared\/DESIGN\.md/.test(text))
        bad.push(`${file}: points outside the repository`);
      for (const m of text.matchAll(/design\.md#([A-Za-z0-9_-]+)/g))
        if (!designAnchors.has(m[1]!)) bad.push(`${file}: design.md#${m[1]} is no heading of docs/design.md`);
      // "design §3", "docs/design.md §3, §9 and §10": every number must be a section.
      for (const m of text.matchAll(/\bdesign(?:\.md)? §(\d+)((?:(?:\s*,\s*|\s*&\s*|\s+and\s+)§\d+)*)/gi))
        for (const n of [m[1]!, ...[...m[2]!.matchAll(/§(\d+)/g)].map((x) => x[1]!)])
          if (!sections.has(Number(n))) bad.push(`${file}: design §${n} is no section of docs/design.md`);
    }
    expect(bad).toEqual([]);
  });
});

describe('comments and docs say what is, not what happened', () => {
  it('no file of code, tests or docs cites a tracker issue by number (git keeps the history)', () => {
    // Built from parts, so this file does not match itself. A reference wrapped onto the next line of a
    // comment ("… issue" / " * 24") counts too: the break and the comment marks between are skipped.
    const issueNumber = new RegExp(['\\bissues?', '(?: |\\s*\\n\\s*(?:[*/#;-]+\\s*)?)#?', '\\d+'].join(''), 'gi');
    const bad: string[] = [];
    for (const file of repoFiles()) {
      if (/\.(png|jpg|jpeg|gif|ico|svg|woff2?|lockb?)$/.test(file) || file === 'package-lock.json') continue;
      const text = read(file);
      for (const m of text.matchAll(issueNumber)) {
        const line = text.slice(0, m.index).split('\n').length;
        bad.push(`${file}:${line}: ${m[0].replace(/\s+/g, ' ')}`);
      }
    }
    expect(bad).toEqual([]);
  });
});

describe('docs/configuration.md', () => {
  const page = read('docs/configuration.md');
  /** Backticked names in the first column of the tables of one "## <title>" section. */
  function documented(title: string): string[] {
    const start = page.indexOf(`\n## ${title}\n`);
    expect(start, `a "## ${title}" section`).toBeGreaterThanOrEqual(0);
    const end = page.indexOf('\n## ', start + 1);
    const section = page.slice(start, end < 0 ? undefined : end);
    return [...section.matchAll(/^\| `([A-Z][A-Z0-9_]*)`\s*\|/gm)].map((m) => m[1]!);
  }
  const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

  it('lists exactly the settings origin/platform/config.ts parses, each once', () => {
    const names = documented('Origin');
    expect(names.length, 'no setting listed twice').toBe(new Set(names).size);
    expect(sorted(names)).toEqual(sorted(CONFIG_NAMES));
  });

  it('lists exactly the vars and secrets the Worker declares, and the Worker reads each of them', () => {
    const wrangler = read('wrangler.toml');
    const vars = /^\[vars\]\n([\s\S]*?)^\[/m.exec(wrangler)?.[1] ?? '';
    const varNames = [...vars.matchAll(/^([A-Z][A-Z0-9_]*)\s*=/gm)].map((m) => m[1]!);
    const required = /^\[secrets\]\s*\nrequired\s*=\s*\[([^\]]*)\]/m.exec(wrangler)?.[1] ?? '';
    const requiredSecrets = [...required.matchAll(/"([A-Z0-9_]+)"/g)].map((m) => m[1]!);
    const optionalSecrets = [...read('edge/optional-secrets.d.ts').matchAll(/^\s+([A-Z][A-Z0-9_]*)\?: string;/gm)].map(
      (m) => m[1]!,
    );
    // wrangler types writes every var and required secret as a string member of Env; bindings are not strings.
    const generated = [...read('edge/worker-configuration.d.ts').matchAll(/^\s{4}([A-Z][A-Z0-9_]*): string;/gm)].map(
      (m) => m[1]!,
    );
    expect(sorted(generated)).toEqual(sorted([...varNames, ...requiredSecrets]));
    expect(sorted(requiredSecrets)).toEqual(sorted(EDGE_SECRET_NAMES));
    const declared = sorted([...varNames, ...requiredSecrets, ...optionalSecrets]);

    const names = documented('Edge');
    expect(names.length, 'no setting listed twice').toBe(new Set(names).size);
    expect(sorted(names)).toEqual(declared);

    const edgeSource = repoFiles()
      .filter((f) => f.startsWith('edge/') && f.endsWith('.ts') && !f.endsWith('.d.ts'))
      .map(read)
      .join('\n');
    const readByEdge = new Set([...edgeSource.matchAll(/\benv\.([A-Z][A-Z0-9_]*)\b/g)].map((m) => m[1]!));
    expect(
      declared.filter((name) => !readByEdge.has(name)),
      'declared but never read',
    ).toEqual([]);
    const bindings = new Set(['ASSETS', 'ACTIVITY', 'USER_GATE', 'ADMISSION', 'LIVE_ACTIVITIES', 'EDGE_FIGURES']);
    expect(
      [...readByEdge].filter((name) => !bindings.has(name) && !declared.includes(name)),
      'read but not declared',
    ).toEqual([]);
  });

  it('every tool variable it lists is read by a script, benchmark or test helper', () => {
    const tools = documented('Tools');
    expect(tools.length).toBeGreaterThan(0);
    const source = repoFiles()
      .filter((f) => /^(scripts|bench|test\/helpers|test\/e2e)\//.test(f) && /\.(ts|sh)$/.test(f))
      .map(read)
      .join('\n');
    expect(tools.filter((name) => !new RegExp(`\\b${name}\\b`).test(source))).toEqual([]);
  });
});

function splitAnchor(target: string): [string, string | undefined] {
  const hash = target.indexOf('#');
  return hash < 0 ? [target, undefined] : [target.slice(0, hash), target.slice(hash + 1)];
}
