// The import rules, run in `npm run check` (`npx depcruise src test bench` alone shows the
// offending imports): the ground floor (common, then config and database) imports nothing above it,
// common's own folders keep one order, the product imports nothing from the simulator (devnet),
// and there are no import circles.
// Type-only imports count: a type from above ties the floor to the building as much as a value.

/**
 * common's folders from the top floor down; every other part of common (its other folders, the
 * files at its root) is below them. A part imports only what stands below it.
 */
const COMMON_FLOORS = [
  ['openapi'],
  ['access'],
  ['http', 'throttling'],
  ['errors'],
  ['logging', 'metrics'],
];

const commonFloorRules = COMMON_FLOORS.map((floor, index) => {
  const upToHere = COMMON_FLOORS.slice(0, index + 1).flat();
  return {
    name: `common-below-${floor.join('-')}`,
    comment: `Inside common, only the floors above import ${floor.join(' or ')} (the order: ${COMMON_FLOORS.map((f) => f.join(' and ')).join(', ')}, then the rest).`,
    severity: 'error',
    from: {
      path: '^src/common/',
      pathNot: [`^src/common/(${upToHere.join('|')})/`, '[.]spec[.]ts$'],
    },
    to: { path: `^src/common/(${floor.join('|')})/` },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...commonFloorRules,
    {
      name: 'ground-floor-imports-the-building',
      comment:
        'common, config and database sit below every feature: they import nothing from modules, network or devnet.',
      severity: 'error',
      from: { path: '^src/(common|config|database)/' },
      to: { path: '^src/(modules|network|devnet)/' },
    },
    {
      name: 'common-imports-config',
      comment:
        'common is below config: a part of common that needs settings declares them (an interface and a token) and ConfigModule provides them.',
      severity: 'error',
      from: { path: '^src/common/', pathNot: '[.]spec[.]ts$' },
      to: { path: '^src/config/' },
    },
    {
      name: 'product-imports-the-simulator',
      comment:
        'The devnet is a development tool: modules and network import nothing from it (their tests may use it as a fixture).',
      severity: 'error',
      from: { path: '^src/(modules|network)/', pathNot: '[.]spec[.]ts$' },
      to: { path: '^src/devnet/' },
    },
    {
      name: 'simulator-imports-the-product',
      comment:
        'The devnet plays the miners: it may share the wire protocol (network) but not the features (modules).',
      severity: 'error',
      from: { path: '^src/devnet/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'not-in-package-json',
      comment:
        'Every package imported is declared in package.json: one reached only as a dependency of a dependency can change or vanish with that dependency\'s next release.',
      severity: 'error',
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'shipped-code-imports-a-dev-dependency',
      comment:
        'The image installs production dependencies only: what runs in it (src, tests aside) imports no devDependency, types aside.',
      severity: 'error',
      from: { path: '^src/', pathNot: '[.]spec[.]ts$' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-circular',
      comment: 'Import circles make the load order fragile and the layers meaningless.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
