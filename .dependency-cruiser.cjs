// The floors of docs/architecture.md as rules, checked by `npm run lint` (and so by `npm test`):
// a room imports only rooms on its own floor or below, no import runs in a circle, handlers stay
// free of hapi and the SQLite driver, and nothing imports a handler. A new arrow back up fails
// with the rule's name, e.g. "no-up-from-db".
//
// Floors, from the ground up. A room is a path prefix; the rooms of one floor may import each
// other.
const floors = [
  ['model', ['^model/']],
  ['host', ['^lib/host/', '^lib/internals/']],
  ['db', ['^db/', '^migrations/']],
  ['process', ['^lib/process/']],
  ['telegram', ['^lib/telegram/']],
  ['layout', ['^lib/layout/']],
  ['queue', ['^lib/queue/']],
  ['read-proof', ['^lib/http/read-proof/']],
  ['link', ['^lib/link/']],
  ['ops', ['^lib/ops/', '^lib/testmode/']],
  ['functions', ['^lib/deps\\.ts$', '^lib/functions/']],
  ['service', ['^lib/service\\.ts$']],
  ['http', ['^lib/http/(?!read-proof/)']],
  ['handlers', ['^handlers/']],
  ['main', ['^lib/main\\.ts$']],
];

const upward = floors.slice(0, -1).map(([name, paths], i) => ({
  name: `no-up-from-${name}`,
  comment: `${name} (${paths.join(', ')}) imports only its own floor and those below it (docs/architecture.md, "The rooms and their floors")`,
  severity: 'error',
  from: { path: paths },
  to: { path: floors.slice(i + 1).flatMap(([, p]) => p) },
}));

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'no-circles',
      comment: 'no import runs in a circle',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'nothing-imports-a-handler',
      comment:
        'a handler is loaded by lib/functions/define.ts from manifest.json, never imported (the dashboard feed shares the status function, the one exception)',
      severity: 'error',
      from: { pathNot: '^handlers/dashboard-data\\.ts$' },
      to: { path: '^handlers/' },
    },
    {
      name: 'handlers-without-frameworks',
      comment: 'a handler never imports hapi or the SQLite driver: what it needs comes in deps (lib/deps.ts)',
      severity: 'error',
      from: { path: '^handlers/' },
      to: { path: ['node_modules/@hapi/', 'node_modules/better-sqlite3'] },
    },
    {
      name: 'internals-stay-in-their-room',
      comment: "what reaches past Node's or hapi's public API lives in lib/internals/, one module per dependency",
      severity: 'error',
      from: { pathNot: '^lib/internals/' },
      to: { path: 'node_modules/[^/]+/lib/internals|node_modules/@hapi/hapi/lib/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(dist|node_modules|test)/' },
  },
};
