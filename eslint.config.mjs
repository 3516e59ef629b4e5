// ESLint for the whole tree (`npm run lint`; part of `npm test`). Formatting is Prettier's job
// (`npm run format:check`): eslint-config-prettier, last, turns off every rule that would argue with it.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

const specs = ['**/*.spec.ts'];
const testCode = [...specs, 'test/**/*.ts', 'bench/**/*.ts', 'libs/*/src/testing/**/*.ts'];

export default defineConfig(
  globalIgnores(['**/node_modules/', '**/dist/', 'data/', 'coverage/', 'test-artifacts/', '.bench-tmp/']),

  // The type-checked recommended set: its rules find the bugs this code base can have — a promise
  // nobody awaits or one handed to a callback that ignores it (no-floating-promises,
  // no-misused-promises, await-thenable), `any` leaking out of JSON, SQLite rows or gRPC into typed
  // code (no-unsafe-*), casts that claim nothing (no-unnecessary-type-assertion), throwing or
  // rejecting with something that is not an Error (only-throw-error, prefer-promise-reject-errors).
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Added: evolve/decide switch over event and command unions; a new event type must not fall
      // through unhandled. A `default:` branch counts as handling the rest.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // Passing on a caught value (typed unknown) is a rethrow: allowed, as only-throw-error allows it.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingUnknown: true, allowThrowingAny: true },
      ],
      // Added: `return promise` inside try/catch skips the catch; await it there.
      '@typescript-eslint/return-await': ['error', 'error-handling-correctness-only'],
      eqeqeq: ['error', 'smart'],
      // Added: a type used only as a type is imported as one, so a value import means a runtime
      // dependency. The rule leaves files with decorators alone (emitDecoratorMetadata needs the
      // value import of a constructor parameter's class for Nest's injection).
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // A leading underscore marks a parameter or binding kept on purpose (a callback's signature,
      // `const { secret: _secret, ...rest } = x` to drop a key).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // Off: an `async` method without `await` is how a synchronous adapter (better-sqlite3) meets
      // the async EventStore port and Nest's async hooks: its throws become rejections, which is the
      // point. Removing `async` as the rule asks would make them synchronous throws.
      '@typescript-eslint/require-await': 'off',
    },
  },

  // Libraries log through pino, which redacts secrets and tokens; console output would bypass it.
  { files: ['libs/**/*.ts'], ignores: testCode, rules: { 'no-console': 'error' } },

  // Added: in Node 20's V8 `{ ...base, key: value }` makes a new hidden class per call (extend in
  // @filing/platform says how and what it cost). Not checked: decorator arguments and the OpenAPI
  // document (built once at start), and the SDK (libs/client, at the pace of its requests).
  {
    files: ['libs/**/*.ts', 'apps/**/*.ts'],
    ignores: [...testCode, '**/*.dto.ts', 'apps/service/src/openapi*.ts', 'libs/client/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ObjectExpression > SpreadElement:first-child ~ *',
          message:
            'A literal that starts with a spread and goes on (a property, another spread) gets a new hidden class per call: use extend(base, { … }) from @filing/platform, or put a property first.',
        },
      ],
    },
  },

  // Tests, test support and benchmarks read JSON bodies and rows whose shape is what the test
  // asserts: typing every `res.json()` would add casts, not safety. Production code keeps the rules.
  {
    files: testCode,
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },

  // No skipped or focused tests (docs/contributing.md): a test that cannot run is deleted or fixed.
  {
    files: specs,
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'MemberExpression[object.name=/^(describe|it|test)$/][property.name=/^(skip|only|todo|failing)$/]',
          message: 'No skipped, focused or pending tests: fix the test or delete it.',
        },
        {
          selector: 'CallExpression[callee.name=/^(xdescribe|xit|xtest|fdescribe|fit)$/]',
          message: 'No skipped or focused tests: fix the test or delete it.',
        },
      ],
    },
  },

  // The few plain JavaScript files (CLI launcher, Jest and dependency-cruiser configs, this file):
  // no type information, Node's CommonJS globals.
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { sourceType: 'commonjs', globals: { __dirname: 'readonly', process: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  { files: ['**/*.mjs'], languageOptions: { sourceType: 'module' } },

  prettier,
);
