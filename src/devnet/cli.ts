import { dirname, join, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { describeBehaviour, MinerBehaviour, parseFaultSpec } from './behaviour';
import { Devnet, isLoopbackHost, maxBasePort, MinerSpec, startDevnet } from './devnet';
import { writeGatewayWallet } from './gateway-wallet';

/**
 * Runs the simulated miner network on its own:
 *   node dist-dev/src/devnet/cli.js --miners 8 --seed 7 --faults "2:hang,3:fabricate"
 */

export const USAGE = `Usage: node dist-dev/src/devnet/cli.js [options]
  --miners <n>        number of miners (default 8)
  --seed <n>          seed of the corpus, keys and faults (default 1)
  --host <host>       loopback address to bind (default 127.0.0.1)
  --base-port <port>  first port, miners on consecutive ports (default 0: ephemeral)
  --metagraph <path>  where to write the metagraph (default ./.data/devnet/metagraph.json)
  --validators <n>    validator entries without an axon (default 2)
  --validator-hotkeys <ss58,...>
                      hotkeys of outside validators (your gateway's) to list with a permit
                      and stake, so that the miners take their calls
  --gateway-wallet <dir>
                      write a test hotkey for the gateway as the btwallet file
                      <dir>/devnet/hotkeys/gateway (kept if present) and list it
                      as a validator: for a gateway in production mode (docker compose)
  --stored-only       every miner answers 404 to OnDemandRequest, as public subnet 13
                      miners do since December 2025 (stored data only); also
                      DEVNET_STORED_ONLY=true in the environment (true or false)
  --faults <spec>     e.g. "2:hang,3:fabricate,4:latency=200-400,4:rate=0.5"
                      faults: hang 500 malformed oversize wrongSchema fabricate partial
                      wrongHour wrongLabel brokenText latency=<ms>|<min>-<max>
                      overclaim=<factor>
                      rate=<0..1> endpoints=ondemand+index+bucket+contents honest
                      policies: no-ondemand blacklist-all no-strict-budget
  -h, --help          this text

Exit status: 0 stopped by SIGINT/SIGTERM (or --help), 1 failed to start or to stop
(a port in use, an unwritable --metagraph), 2 bad options or DEVNET_STORED_ONLY.`;

interface CliOptions {
  miners: number;
  seed: number;
  host: string;
  basePort: number;
  metagraphFile: string;
  validators: number;
  validatorHotkeys: string[];
  gatewayWallet: string | undefined;
  faults: Map<number, MinerBehaviour>;
  storedOnly: boolean;
}

function integer(text: string, name: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value < min || value > max) {
    throw new Error(`--${name} must be an integer between ${min} and ${max}, got "${text}"`);
  }
  return value;
}

/**
 * DEVNET_STORED_ONLY as the gateway reads it: `true` or `false`, blank for unset. Anything else
 * (`yes`, `1`) was read as false, and the miners answered on-demand queries without a word.
 */
function storedOnlyFromEnvironment(text: string | undefined): boolean {
  // White space at the ends is not the value, as the gateway reads every setting.
  const value = text?.trim();
  if (value === undefined || value === '') return false;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new Error(`DEVNET_STORED_ONLY must be true or false, got "${text}"`);
}

function hotkeys(text: string | undefined): string[] {
  if (text === undefined) return [];
  const list = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  // Given but empty: most likely a command substitution that failed, and miners that would then
  // refuse the gateway (403 blacklisted) while it spends its hourly budgets on them.
  if (list.length === 0)
    throw new Error(
      '--validator-hotkeys is empty: give one or more ss58 addresses, or leave it out',
    );
  for (const hotkey of list) {
    if (!/^5[1-9A-HJ-NP-Za-km-z]{47}$/.test(hotkey))
      throw new Error(`--validator-hotkeys: "${hotkey}" is not an ss58 address`);
  }
  return list;
}

export function parseCliArguments(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = {},
): CliOptions | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      miners: { type: 'string', default: '8' },
      seed: { type: 'string', default: '1' },
      host: { type: 'string', default: '127.0.0.1' },
      'base-port': { type: 'string', default: '0' },
      metagraph: { type: 'string', default: './.data/devnet/metagraph.json' },
      validators: { type: 'string', default: '2' },
      'validator-hotkeys': { type: 'string' },
      'gateway-wallet': { type: 'string' },
      faults: { type: 'string', default: '' },
      'stored-only': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  // Before the environment is read: help must work beside a bad DEVNET_STORED_ONLY.
  if (values.help) return 'help';
  // DEVNET_STORED_ONLY=true (docker-compose) does the same as the flag; a bad value is refused
  // even beside the flag, since the same .env feeds the gateway.
  const storedOnly = storedOnlyFromEnvironment(env.DEVNET_STORED_ONLY) || values['stored-only'];
  const host = values.host;
  if (!isLoopbackHost(host)) throw new Error(`--host must be a loopback address, got "${host}"`);
  const miners = integer(values.miners, 'miners', 1, 1000);
  const faults = parseFaultSpec(values.faults);
  for (const uid of faults.keys()) {
    if (uid >= miners)
      throw new Error(`--faults names uid ${uid}, but miners are 0..${miners - 1}`);
  }
  return {
    miners,
    seed: integer(values.seed, 'seed', 0, 2 ** 32 - 1),
    host,
    basePort: integer(values['base-port'], 'base-port', 0, maxBasePort(miners)),
    metagraphFile: values.metagraph,
    validators: integer(values.validators, 'validators', 0, 1000),
    validatorHotkeys: hotkeys(values['validator-hotkeys']),
    gatewayWallet: values['gateway-wallet'],
    faults,
    storedOnly,
  };
}

async function main(): Promise<void> {
  let options: CliOptions | 'help';
  try {
    options = parseCliArguments(process.argv.slice(2), process.env);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  try {
    stopOnSignals(await start(options));
  } catch (error) {
    process.stderr.write(`${startFailure(error, options)}\n`);
    process.exitCode = 1;
  }
}

async function start(options: CliOptions): Promise<Devnet> {
  const { faults } = options;
  const validatorHotkeys = [...options.validatorHotkeys];
  if (options.gatewayWallet) {
    const hotkey = writeGatewayWallet(options.gatewayWallet, options.seed);
    validatorHotkeys.push(hotkey);
    process.stdout.write(`gateway wallet: ${options.gatewayWallet} (hotkey ${hotkey})\n`);
  }
  const specs: MinerSpec[] = Array.from({ length: options.miners }, (_, uid) => ({
    behaviour: faults.get(uid),
  }));
  const devnet = await startDevnet({
    miners: specs,
    seed: options.seed,
    host: options.host,
    basePort: options.basePort,
    metagraphFile: options.metagraphFile,
    // A sample validation file beside it, for HF_RESULTS_PATH (list_repo_names).
    repoNamesFile: join(dirname(options.metagraphFile), 'hf_validation.parquet'),
    validators: options.validators,
    validatorHotkeys,
    storedOnly: options.storedOnly,
  });
  for (const miner of devnet.miners) {
    const held = devnet.corpus.holdingsOf(miner.uid).length;
    process.stdout.write(
      `miner uid=${miner.uid} url=${miner.url} hotkey=${miner.hotkey} coldkey=${miner.coldkey} ` +
        `items=${held} behaviour=${describeBehaviour(miner.behaviour)}\n`,
    );
  }
  process.stdout.write(
    `devnet: ${devnet.miners.length} miners, ${devnet.corpus.items.length} items, seed ${options.seed}` +
      `${devnet.storedOnly ? ', stored data only (OnDemandRequest answers 404)' : ''}; ` +
      `metagraph written to ${devnet.metagraphFile}, repository names to ${devnet.repoNamesFile}\n`,
  );
  return devnet;
}

/**
 * A failure to start, as one line naming the option to change: Node's message names a port or
 * a directory, not the flag that chose it.
 */
export function startFailure(error: unknown, options: CliOptions): string {
  const message = error instanceof Error ? error.message : String(error);
  const { syscall, path } = error as NodeJS.ErrnoException;
  if (syscall === 'listen' && options.basePort !== 0)
    return (
      `devnet: --base-port ${options.basePort}: ${message} (miner uid listens on ` +
      '--base-port + uid: choose another --base-port, or 0 for free ports)'
    );
  if (syscall === 'listen') return `devnet: --host ${options.host}: ${message}`;
  if (path === undefined) return `devnet: ${message}`;
  // The wallet is written first, and its directory is the narrower one when they overlap.
  const wallet = options.gatewayWallet;
  if (wallet !== undefined && related(resolve(path), resolve(wallet)))
    return `devnet: --gateway-wallet ${wallet}: ${message}`;
  // The repository names file is written beside the metagraph: the directory is --metagraph's.
  if (related(resolve(path), dirname(resolve(options.metagraphFile))))
    return `devnet: --metagraph ${options.metagraphFile}: ${message}`;
  return `devnet: ${message}`;
}

/** One path is the other or inside it: a mkdir fails on the part of the path that is a file. */
function related(one: string, other: string): boolean {
  return one === other || one.startsWith(other + sep) || other.startsWith(one + sep);
}

function stopOnSignals(devnet: Devnet): void {
  const shutdown = (signal: NodeJS.Signals): void => {
    process.stdout.write(`devnet: ${signal} received, stopping\n`);
    process.off('SIGINT', shutdown);
    process.off('SIGTERM', shutdown);
    devnet.stop().then(
      () => process.stdout.write('devnet: stopped\n'),
      (error: unknown) => {
        process.stderr.write(`devnet: stop failed: ${String(error)}\n`);
        process.exitCode = 1;
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`devnet: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
