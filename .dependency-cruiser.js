// The import rules, run in `npm run check` (`npx depcruise src` alone shows the offending
// imports): the ground floor (common, then config and database) imports nothing above it, the
// product imports nothing from the simulator (devnet), and there are no import circles.
// Type-only imports count: a type from above ties the floor to the building as much as a value.

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
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
