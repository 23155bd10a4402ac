/**
 * Where the project's data folders (lua/, schema/) are, whether this code runs from source (tsx:
 * `<root>/origin/platform/paths.ts`) or compiled (`node dist/origin/main.js`: `<root>/dist/origin/platform/paths.js`).
 * The compiled origin reads the same lua/ and schema/ as the source, so there is one copy of each.
 */
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder `npm run build` writes to (tsconfig.build.json's outDir). */
export const BUILD_DIR = 'dist';

const originDir = dirname(dirname(fileURLToPath(import.meta.url)));
const above = dirname(originDir);
export const PROJECT_ROOT = basename(above) === BUILD_DIR ? dirname(above) : above;

/** A path inside the project: `projectPath('lua')` is `<root>/lua` from source and from dist/ alike. */
export function projectPath(...parts: string[]): string {
  return join(PROJECT_ROOT, ...parts);
}
