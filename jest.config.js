// Two projects: `fast` (in-process, server.inject, a fresh SQLite file per test) and `e2e`
// (child processes, restarts, crashes, real sockets). `npm test` runs both.
const tsJest = { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] };
module.exports = {
  // 20 s, not Jest's 5, for a test that sets none: a test that starts a service (its writer
  // thread, its first requests) takes about 2 s here and took over 5 s with three suites at once
  // on two cores. A test whose point is a time bound states its own.
  testTimeout: 20_000,
  projects: [
    {
      displayName: 'fast',
      testEnvironment: 'node',
      transform: tsJest,
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: ['<rootDir>/test/e2e/'],
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      transform: tsJest,
      testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
    },
  ],
};
