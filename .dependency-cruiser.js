// The import rules, run in `npm run check` (`npx depcruise src test bench` alone shows the
// offending imports): the ground floor (common, then config and database) imports nothing above it,
// common's own folders keep one order, the product imports nothing from the simulator (devnet),
// the miner network is reached only through its public surface, and there are no import circles.
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
  ['jobs'],
  ['writes'],
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

/**
 * What the rest of src/ may import from src/network/ (docs/decisions.md, "The network's public
 * surface"); every other file there is the network's own. Paths below src/network/, no `.ts`.
 */
const NETWORK_PUBLIC = [
  // The miner network: its module and its one service.
  'network.module',
  'network.service',
  // What the service takes and answers, and what the API's DTOs enumerate.
  'protocol',
  'sources',
  'query-result',
  'query-failures',
  'network-status',
  'neuron-listing',
  'item-uri',
  'legacy-items',
  'answered-items',
  'x-post-id',
  'x-content',
  // The erased-authors register's keys and the SQL an insert leaves a registered author out by.
  'erased-authors',
  // The miner index's totals, read by the statistics (NetworkModule exports its module).
  'index/miner-index.service',
  // Who this gateway is on the network: loaded at start, injected where it signs or is named.
  'bittensor/keypair',
  'bittensor/validator-key',
  'bittensor/validator-identity',
  // The votes: our commitment on chain and the Gravity repository.
  'chain/chain-commitments.service',
  'chain/commitment-results',
  'gravity/gravity-git',
  'gravity/gravity-errors',
];

/** What the devnet, which plays the miners, may share besides: the wire protocol itself. */
const NETWORK_WIRE = ['bittensor/', 'sn13/', 'query-matcher', 'keywords'];

/** A path regex for files below src/network/: a name ending in `/` is a whole folder. */
const networkFiles = (names) => {
  const patterns = names.map((name) => {
    const exact = name.replaceAll('.', '[.]');
    return name.endsWith('/') ? `${exact}.+` : exact;
  });
  return `^src/network/(${patterns.join('|')})[.]ts$`;
};

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
      name: 'network-internal-imported',
      comment:
        'The miner network is one module with a small public service: outside src/network/ (all of src/, specs included; the devnet has its own rule), only the files of NETWORK_PUBLIC are imported; move a type, constant or error others need into one of them rather than reaching in.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(network|devnet)/' },
      to: { path: '^src/network/', pathNot: networkFiles(NETWORK_PUBLIC) },
    },
    {
      name: 'simulator-imports-network-state',
      comment:
        "The devnet plays the miners: it shares the network's public contracts and its wire protocol (NETWORK_WIRE), not its services, stores or state.",
      severity: 'error',
      from: { path: '^src/devnet/' },
      to: { path: '^src/network/', pathNot: networkFiles([...NETWORK_PUBLIC, ...NETWORK_WIRE]) },
    },
    {
      name: 'not-in-package-json',
      comment:
        "Every package imported is declared in package.json: one reached only as a dependency of a dependency can change or vanish with that dependency's next release.",
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
