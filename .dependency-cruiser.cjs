/**
 * Keeps the modules honest (DESIGN.md): a context imports another only through its index.ts
 * (test helpers under src/testing/ are allowed to specs). `npm test` runs this check.
 */
module.exports = {
  forbidden: [
    {
      name: 'lib-only-through-index',
      comment: 'Import another lib through its index.ts (the @filing/<lib> alias), never its internals.',
      severity: 'error',
      from: { path: '^libs/([^/]+)/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^libs/([^/]+)/src/', pathNot: ['^libs/$1/', '^libs/[^/]+/src/index\\.ts$'] },
    },
    {
      name: 'spec-only-through-index-or-testing',
      severity: 'error',
      from: { path: '^libs/([^/]+)/.*\\.spec\\.ts$' },
      to: {
        path: '^libs/([^/]+)/src/',
        pathNot: ['^libs/$1/', '^libs/[^/]+/src/index\\.ts$', '^libs/[^/]+/src/testing/'],
      },
    },
    {
      name: 'app-only-through-index',
      severity: 'error',
      from: { path: '^apps/' },
      // libs/client publishes a second entry point (its package.json "exports"): the SQLite dedupe store.
      to: {
        path: '^libs/[^/]+/src/',
        pathNot: ['^libs/[^/]+/src/index\\.ts$', '^libs/[^/]+/src/testing/', '^libs/client/src/dedupe-sqlite\\.ts$'],
      },
    },
    {
      name: 'libs-never-import-apps',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'client-is-standalone',
      comment:
        'libs/client is the SDK customers install on its own: Node built-ins only (and better-sqlite3 in its separate dedupe-sqlite entry), no other lib, no Nest.',
      severity: 'error',
      from: { path: '^libs/client/' },
      to: { dependencyTypesNot: ['core'], pathNot: ['^libs/client/', '^node_modules/(@types/)?better-sqlite3/'] },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
