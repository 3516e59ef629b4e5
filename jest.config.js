/** Jest runs TypeScript through swc (no type-check: `npm run typecheck` does that). */
const swc = {
  sourceMaps: 'inline',
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    keepClassNames: true,
    target: 'es2022',
  },
  module: { type: 'commonjs' },
};

module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/{apps,libs,test}/**/*.spec.ts'],
  transform: { '^.+\\.(t|j|mj)s$': ['@swc/jest', swc] },
  // Nest 12, cookie@2 (fastify's inject) and content-disposition@2 (@fastify/static) ship ESM; swc turns them
  // into CommonJS for Jest on Node 20.
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs|cookie|content-disposition|oauth4webapi)/)'],
  setupFiles: ['reflect-metadata'],
  moduleNameMapper: {
    '^@filing/([^/]+)$': '<rootDir>/libs/$1/src',
    '^@filing/([^/]+)/(.*)$': '<rootDir>/libs/$1/src/$2',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  // Chromium and Caddy, installed when missing: `npm test` alone passes on a fresh machine.
  globalSetup: '<rootDir>/test/support/system-tools.js',
  maxWorkers: 2,
  testTimeout: 30000,
};
