// Two projects: `fast` (in-process, server.inject, a fresh SQLite file per test) and `e2e`
// (child processes, restarts, crashes, real sockets). `npm test` runs both.
const tsJest = { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] };
module.exports = {
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
