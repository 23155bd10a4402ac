/**
 * The shape rules of docs/architecture.md, checked on the source itself (SQL in stores:
 * sql-in-stores.test.ts):
 * - no import circles anywhere in the repo (type-only imports included: a circle of types is still
 *   a circle a reader has to untangle);
 * - no origin module takes a `ctx` (a service locator): each is handed what it uses, and only the
 *   composition root (origin/server.ts, origin/app.ts, origin/report-cli.ts) sees the parts one
 *   process holds (origin/parts.ts);
 * - imports between origin's folders run one way, down the layers of docs/architecture.md
 *   ("Layers"): platform/ and redis/ import no feature folder, and a feature folder imports only
 *   folders of lower layers. The backward imports that remain are listed one by one; a new one
 *   fails, and so does an entry of the list that no longer exists (so the list only shrinks);
 * - the test files that share a worker's modules (the origin project, `isolate: false` in
 *   vitest.config.ts) mock no module, stub no global and write no `process.env`: what one file
 *   changed there, the next file in the worker would see.
 */
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SOURCE_DIRS = ['origin', 'edge', 'contract', 'lua', 'bench', 'scripts', 'test', 'support'];

function sourceFiles(dir: string): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs).flatMap((name) => {
    const path = join(abs, name);
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) return [];
    if (statSync(path).isDirectory()) return sourceFiles(relative(ROOT, path));
    return /\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts') ? [relative(ROOT, path)] : [];
  });
}

const files = SOURCE_DIRS.flatMap(sourceFiles);
const parsed = new Map(
  files.map((f) => [f, ts.createSourceFile(f, readFileSync(join(ROOT, f), 'utf8'), ts.ScriptTarget.Latest, true)]),
);

/** The repo files a file imports (relative specifiers only; `.js` in a specifier names the `.ts` source). */
function importsOf(file: string): string[] {
  const source = parsed.get(file)!;
  const specifiers: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier)
      specifiers.push((node.moduleSpecifier as ts.StringLiteral).text);
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    )
      specifiers.push(node.arguments[0].text);
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal))
      specifiers.push(node.argument.literal.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers
    .filter((s) => s.startsWith('.'))
    .map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)).replace(/\.js$/, '.ts'))
    .map((target) => (parsed.has(target) ? target : parsed.has(`${target}/index.ts`) ? `${target}/index.ts` : target))
    .filter((target) => parsed.has(target));
}

/** Strongly connected components of more than one file, or a file importing itself (Tarjan). */
function importCircles(): string[][] {
  const graph = new Map(files.map((f) => [f, importsOf(f)]));
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const connect = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)!) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)!.includes(v)) circles.push(component.sort());
    }
  };
  for (const f of files) if (!index.has(f)) connect(f);
  return circles;
}

/** The composition root: the only modules that may import origin/parts.ts. */
const COMPOSITION_ROOT = new Set(['origin/server.ts', 'origin/app.ts', 'origin/report-cli.ts']);

/** Parameters and constructor parameter properties named `ctx`, and imports of the parts outside the root. */
function contextUses(file: string): string[] {
  const source = parsed.get(file)!;
  const found: string[] = [];
  const at = (node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node: ts.Node) => {
    if (ts.isParameter(node) && ts.isIdentifier(node.name) && node.name.text === 'ctx')
      found.push(`${at(node)}: ctx parameter`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (!COMPOSITION_ROOT.has(file))
    for (const target of importsOf(file))
      if (target === 'origin/parts.ts' || /(^|\/)context\.ts$/.test(target)) found.push(`${file}: imports ${target}`);
  return found;
}

/**
 * The layers of origin/ (docs/architecture.md "Layers"), lowest first: a folder may import folders
 * of lower layers only (and itself). The files directly under origin/ are the composition root.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['platform'],
  ['redis'],
  ['orders'],
  ['sale'],
  ['access'],
  ['lottery', 'settlement'],
  ['recovery'],
  ['reservation'],
  ['watch'],
  ['operator'],
  ['console'],
  ['openapi'],
];

/** The layer of an origin file's folder; the composition root (files directly under origin/) is above all. */
function layerOf(file: string): { folder: string; layer: number } | null {
  const m = /^origin\/([^/]+)\//.exec(file);
  if (!m) return file.startsWith('origin/') ? { folder: '(root)', layer: LAYERS.length } : null;
  const layer = LAYERS.findIndex((folders) => folders.includes(m[1]!));
  return { folder: m[1]!, layer };
}

/** Every import of an origin file into another origin folder of its own layer or a higher one. */
function backwardImports(): string[] {
  const found: string[] = [];
  for (const file of files) {
    const from = layerOf(file);
    if (!from || from.folder === '(root)') continue;
    for (const target of importsOf(file)) {
      const to = layerOf(target);
      if (!to || to.folder === from.folder) continue;
      if (to.layer >= from.layer) found.push(`${file} -> ${target}`);
    }
  }
  return found.sort();
}

describe('code shape', () => {
  it('finds the imports it checks (a parser that saw nothing would pass everything)', () => {
    expect(files.length).toBeGreaterThan(200);
    expect(importsOf('origin/main.ts').length).toBeGreaterThan(0);
  });

  it('has no import circles anywhere in the repo', () => {
    expect(importCircles()).toEqual([]);
  });

  it('hands each origin module what it uses: no ctx parameter, the parts only in the composition root', () => {
    expect(files.filter((f) => f.startsWith('origin/')).flatMap(contextUses)).toEqual([]);
  });

  it('places every folder of origin/ in a layer', () => {
    const folders = new Set(files.flatMap((f) => /^origin\/([^/]+)\//.exec(f)?.[1] ?? []));
    expect([...folders].filter((folder) => !LAYERS.some((layer) => layer.includes(folder)))).toEqual([]);
  });

  it('marks every browser module // @ts-check (checked by tsconfig.browser.json, and by an editor opening it alone)', () => {
    const browser = ['origin/console', 'edge/public/assets'].flatMap((dir) =>
      readdirSync(join(ROOT, dir))
        .filter((name) => name.endsWith('.js'))
        .map((name) => `${dir}/${name}`),
    );
    expect(browser.length).toBeGreaterThan(5);
    const unchecked = browser.filter((f) => !readFileSync(join(ROOT, f), 'utf8').startsWith('// @ts-check\n'));
    expect(unchecked).toEqual([]);
  });

  it('imports run down the layers: no origin folder imports one of its own layer or above', () => {
    expect(backwardImports()).toEqual([]);
  });

  it('leaves module state alone in the test files that share their modules (no vi.mock, stubs or process.env writes)', () => {
    const shared = files.filter((f) => f.startsWith('test/') && !f.startsWith('test/edge/'));
    expect(shared.length).toBeGreaterThan(50);
    const found: string[] = [];
    for (const f of shared) {
      const visit = (node: ts.Node): void => {
        const text = () => node.getText(parsed.get(f)).slice(0, 60);
        if (
          ts.isCallExpression(node) &&
          /^vi\.(mock|doMock|stubEnv|stubGlobal)$/.test(node.expression.getText(parsed.get(f)))
        ) {
          found.push(`${f}: ${text()}`);
        }
        if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
          if (/^process\.env\b/.test(node.left.getText(parsed.get(f)))) found.push(`${f}: ${text()}`);
        }
        if (ts.isDeleteExpression(node) && /^process\.env\b/.test(node.expression.getText(parsed.get(f)))) {
          found.push(`${f}: ${text()}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(parsed.get(f)!);
    }
    expect(found).toEqual([]);
  });
});
