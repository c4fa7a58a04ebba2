/**
 * What signing costs per miner call: building and signing a whole dendrite request as the miner
 * client does (ours: schnorrkel in WebAssembly via @polkadot/wasm-crypto), beside the same
 * signature made and checked with util-crypto's pure-JS sr25519 (the baseline), and what a
 * devnet axon spends verifying one. Medians of rounds of calls, in one run.
 * Run: npm run bench:signing [-- --calls 500 --rounds 7] (or BENCH_CALLS, BENCH_ROUNDS).
 */
import { performance } from 'node:perf_hooks';
import { benchFlags } from './support/flags';
import { stringToU8a, u8aToHex } from '@polkadot/util';
import {
  keyExtractSuri,
  keyFromPath,
  mnemonicToMiniSecret,
  sr25519PairFromSeed,
  sr25519Sign,
  sr25519Verify,
} from '@polkadot/util-crypto';
import { AxonGuard } from '../src/devnet/axon-checks';
import {
  buildSignedRequest,
  EMPTY_BODY_HASH,
  newTerminal,
  signatureMessage,
} from '../src/network/bittensor/dendrite';
import { cryptoReady, Sr25519Keypair, verifySignature } from '../src/network/bittensor/keypair';
import { onDemandRequestFields } from '../src/network/sn13/messages';
import { alternatingMedians, integerSetting } from './support/measure';
import { commandLine, machineLine, table } from './support/report';

const { values: flags } = benchFlags({
  options: { calls: { type: 'string' }, rounds: { type: 'string' } },
});
const calls = integerSetting('calls', flags.calls, 'BENCH_CALLS', 500);
const rounds = integerSetting('rounds', flags.rounds, 'BENCH_ROUNDS', 7);

/**
 * For each of `runs`, the median over `rounds` of the mean time of one call in a round of
 * `calls`, in ms, after a warm-up; ours and the baseline alternate (alternatingMedians).
 */
function measure<Name extends string>(
  runs: Record<Name, (index: number) => unknown>,
): Promise<Record<Name, number>> {
  for (const run of Object.values<(index: number) => unknown>(runs))
    for (let index = 0; index < Math.min(50, calls); index++) run(index);
  return alternatingMedians(rounds, runs, (run) => {
    const started = performance.now();
    for (let index = 0; index < calls; index++) run(index);
    return (performance.now() - started) / calls;
  });
}

async function main(): Promise<void> {
  await cryptoReady();
  const gateway = Sr25519Keypair.fromUri('//Gateway');
  const miner = Sr25519Keypair.fromUri('//Miner');
  const axon = { ip: '203.0.113.7', port: 8091, hotkey: miner.address };
  const fields = {
    ...onDemandRequestFields({
      source: 'x',
      usernames: [],
      keywords: ['#bitcoin'],
      keywordMode: 'all',
      startDate: null,
      endDate: new Date(),
      limit: 100,
    }),
  };
  const request = () =>
    buildSignedRequest(
      'OnDemandRequest',
      fields,
      10,
      axon,
      newTerminal(gateway.address, Date.now()),
      (text) => gateway.sign(text),
    );
  const message = signatureMessage(
    1_718_696_917_604_843_780n,
    gateway.address,
    miner.address,
    '085bdf0c-2d47-11ef-a8bd-07d2e5f8de9a',
    EMPTY_BODY_HASH,
  );
  const bytes = stringToU8a(message);
  const signature = gateway.sign(message);
  // The pure-JS baseline needs the raw secret, which our keypair never hands out: the same key
  // derived with util-crypto's own pair function stands in for it.
  const { phrase, path } = keyExtractSuri(
    'bottom drive obey lake curtain smoke basket hold race lonely fit walk//Gateway',
  );
  const jsPair = keyFromPath(sr25519PairFromSeed(mnemonicToMiniSecret(phrase)), path, 'sr25519');
  const jsSignature = sr25519Sign(bytes, jsPair);

  const signed = Array.from({ length: calls * (rounds + 1) + 50 }, () => request());
  // The axon's clock stays at the signing time: the requests must all look fresh to it.
  const signedAt = Date.now();
  const guard = new AxonGuard({
    hotkey: miner.address,
    serves: () => true,
    blacklist: () => null,
    nowMs: () => signedAt,
  });
  let next = 0;

  const rows = {
    ...(await measure({ buildOurs: () => request() })),
    ...(await measure({
      signOurs: () => gateway.sign(bytes),
      signJs: () => sr25519Sign(bytes, jsPair),
    })),
    ...(await measure({
      verifyOurs: () => verifySignature(message, signature, gateway.address),
      verifyJs: () => sr25519Verify(bytes, jsSignature, gateway.publicKey),
    })),
    ...(await measure({
      axonCheck: () => {
        const { url, headers, body } = signed[next++ % signed.length];
        if (!guard.check(new URL(url).pathname, headers, body).ok) throw new Error('refused');
      },
    })),
  };
  if (!verifySignature(message, u8aToHex(jsSignature), gateway.address))
    throw new Error('the two implementations disagree');

  const ms = (value: number) => value.toFixed(3);
  const ratio = (baseline: number, ours: number) => `${(baseline / ours).toFixed(1)}×`;
  process.stdout.write(
    [
      '',
      'Signing a miner call: ours (WebAssembly schnorrkel) beside pure-JS sr25519, in one run',
      `command:  ${commandLine()}`,
      `machine:  ${machineLine()}`,
      `method:   median over ${rounds} rounds of the mean of ${calls} calls, after a warm-up; ours and pure JS alternating, in the opposite order each other round`,
      '',
      table([
        ['per call', 'ours ms', 'pure JS ms', 'ours faster'],
        ['sign the message', ms(rows.signOurs), ms(rows.signJs), ratio(rows.signJs, rows.signOurs)],
        [
          'verify the signature',
          ms(rows.verifyOurs),
          ms(rows.verifyJs),
          ratio(rows.verifyJs, rows.verifyOurs),
        ],
        ['build + sign a whole OnDemandRequest', ms(rows.buildOurs), '-', '-'],
        ['axon checks of one request (devnet)', ms(rows.axonCheck), '-', '-'],
      ]),
      '',
      `signing cost per miner call (build + sign): ${ms(rows.buildOurs)} ms; ` +
        `with pure-JS signing it would be about ${ms(rows.buildOurs - rows.signOurs + rows.signJs)} ms`,
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `bench:signing failed: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
