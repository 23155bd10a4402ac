// @ts-check
// ESLint with type information (docs/architecture.md#tests): typescript-eslint's recommended
// type-checked rules over the TypeScript of every folder and over the browser scripts of the console
// and the sale page (typed by their JSDoc, tsconfig.browser.json). `npm run lint`; part of `npm test`.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

const TS_FILES = ['{origin,edge,contract,scripts,bench,support,test}/**/*.ts', 'vitest.config.ts'];
// Files of the Worker's program (edge/tsconfig.json) that live outside edge/.
const WORKER_FILES_OUTSIDE_EDGE = ['test/edge/**/*.ts', 'bench/worker/**/*.ts'];
const BROWSER_FILES = ['origin/console/*.js', 'edge/public/assets/*.js'];

export default defineConfig(
  globalIgnores(['dist/', 'node_modules/', '.wrangler/', 'test-artifacts/', 'tmp/']),
  {
    files: [...TS_FILES, ...BROWSER_FILES],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        // Each file is typed by the nearest tsconfig.json that includes it (the root one or edge's).
        // edge/vitest.config.ts runs in Node, outside the Worker's program: typed with the root options.
        projectService: { allowDefaultProject: ['edge/vitest.config.ts'], defaultProject: 'tsconfig.json' },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // The async mistakes this linter is here for: on everywhere, tests included.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // A `default` branch is the code's deliberate "every other member" answer (e.g. every other
      // refusal code alike); a switch without one must name every member of its union.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // A leading underscore names a binding kept on purpose (a rest-sibling omission, a placeholder).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // Off: `async` on a function with no `await` still turns a throw into a rejected promise, which
      // callers rely on; dropping it to satisfy the rule would change behaviour.
      '@typescript-eslint/require-await': 'off',
      // Passing on a caught `unknown` (a rejection, a rethrow) passes on what was thrown, as it was.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // URL and URLSearchParams print as their serialization, which is what a template wants of them.
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allow: [{ from: 'lib', name: ['URL', 'URLSearchParams'] }] },
      ],
    },
  },
  {
    // Tests, benchmarks and the scripts read the API's JSON answers as `any` and assert on them or
    // print them: typing each would add hundreds of casts that check nothing more.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // What they destructure ({ driver, close }) are closures returned by factories, not methods
      // that use `this`.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'contract/**/*.ts'],
    rules: {
      // In tests and benchmarks an assertion documents the answer's expected shape. contract/ is
      // compiled by two programs (Node and Worker types): an assertion one needs can look unnecessary
      // in the other.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // A `let x = 0` before a loop or a try is the value a failure message prints when nothing was
      // assigned yet; in tests and benchmarks the rule finds nothing worth a change.
      'no-useless-assignment': 'off',
    },
  },
  {
    files: WORKER_FILES_OUTSIDE_EDGE,
    languageOptions: {
      parserOptions: { projectService: false, project: './edge/tsconfig.json' },
    },
  },
  {
    files: BROWSER_FILES,
    languageOptions: {
      parserOptions: { projectService: false, project: './tsconfig.browser.json' },
    },
    rules: {
      // tsc (checkJs, with the DOM lib) already reports an undefined name.
      'no-undef': 'off',
      // fetch() answers and DOM values are `any` in these JSDoc-typed scripts (the contract's types
      // are named by @typedef where they apply); every use of one would be reported.
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
