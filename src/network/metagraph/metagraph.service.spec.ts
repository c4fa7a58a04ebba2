import { Logger } from '@nestjs/common';
import { linesLoggedBy } from '../../../test/support/logging-context';
import { metagraphNeuron, minerEntityOf } from '../../../test/support/neurons';
import { ValidatorIdentity } from '../bittensor/validator-identity';
import { MinerEntity } from '../miner.entity';
import {
  MetagraphNetwork,
  MetagraphOrigin,
  MinersRepository,
  StoredChain,
  StoredMetagraph,
} from '../miners.repository';
import { MetagraphFile, MetagraphNeuron } from '../protocol';
import { MinerClient } from '../transport/miner-client';
import { MetagraphSource } from './metagraph-source';
import { MetagraphService, START_WAIT_MS } from './metagraph.service';
import { SUSPICIOUS_CONFIRM_MS, SUSPICIOUS_CONFIRM_READS } from './suspicious-reads';
import { testConfig } from '../../../test/support/test-config';

const OWN_HOTKEY = '5OwnHotkey';
const MIN_STAKE = 10_000;

/** A source whose next answer the test sets: a metagraph, or an error to throw. */
class FakeSource implements MetagraphSource {
  description = 'fake source';
  next: MetagraphFile | Error = { netuid: 13, block: 1, updated_at: '', neurons: [] };
  /** What watch was given, until stopped. */
  changed: (() => Promise<void>) | undefined;
  closed = false;
  /** What networkOf says of every answer (a file written by the devnet says `devnet`). */
  network: MetagraphNetwork = 'file';
  networkOf(): MetagraphNetwork {
    return this.network;
  }
  read(): Promise<MetagraphFile> {
    return this.next instanceof Error ? Promise.reject(this.next) : Promise.resolve(this.next);
  }
  watch(sync: () => Promise<void>): () => void {
    this.changed = sync;
    return () => (this.changed = undefined);
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

/**
 * The miners table in memory, as MinersRepository.syncNeurons leaves it: listed neurons active
 * (or address_refused), a failing one with the same hotkey still failing, the others
 * deregistered.
 */
class FakeRepository {
  readonly rows = new Map<number, MinerEntity>();
  listAll(): Promise<MinerEntity[]> {
    return Promise.resolve([...this.rows.values()].map((row) => ({ ...row })));
  }
  /** The origin of the last metagraph applied, as metagraph_state keeps it. */
  stored: StoredMetagraph | undefined;
  lastMetagraph(): Promise<StoredMetagraph | undefined> {
    return Promise.resolve(this.stored && { ...this.stored });
  }
  /** What the service last said of the validators among the neurons. */
  validators: number[] = [];
  /** What the next sync says of the stored chain (the test sets it): another chain's. */
  otherChain: StoredChain | undefined;
  syncNeurons(
    neurons: readonly MetagraphNeuron[],
    {
      refused,
      validators,
      origin,
    }: { refused: ReadonlySet<number>; validators: ReadonlySet<number>; origin?: MetagraphOrigin },
  ): Promise<{ hotkeyChanged: number[]; indexesDropped: number[]; otherChain?: StoredChain }> {
    this.validators = [...validators];
    this.stored = origin && { ...origin, neurons: neurons.length, readAt: new Date() };
    const listed = new Set(neurons.map((n) => n.uid));
    for (const row of this.rows.values()) if (!listed.has(row.uid)) row.state = 'deregistered';
    for (const n of neurons) {
      const before = this.rows.get(n.uid);
      const keepsFailing = before?.hotkey === n.hotkey && before.state === 'failing';
      this.rows.set(
        n.uid,
        minerEntityOf(n, {
          credibility: before?.credibility ?? 0.5,
          state: refused.has(n.uid) ? 'address_refused' : keepsFailing ? 'failing' : 'active',
        }),
      );
    }
    return Promise.resolve({ hotkeyChanged: [], indexesDropped: [], otherChain: this.otherChain });
  }
}

function setUp(repository = new FakeRepository()) {
  const source = new FakeSource();
  // Only loopback may be called, as MINER_ALLOWED_NETWORKS=loopback says.
  const client = {
    permitsHost: (host: string) => Promise.resolve(host === '127.0.0.1'),
  } as unknown as MinerClient;
  const config = testConfig({
    netuid: 13,
    network: { validatorMinStake: MIN_STAKE, breakerCooldownMs: 30_000 },
  });
  const identity = { hotkey: OWN_HOTKEY } as ValidatorIdentity;
  const service = new MetagraphService(
    source,
    repository as unknown as MinersRepository,
    client,
    config,
    identity,
  );
  const answer = (neurons: MetagraphNeuron[], block = 100) =>
    (source.next = { netuid: 13, block, updated_at: new Date().toISOString(), neurons });
  const apply = async (neurons: MetagraphNeuron[], block = 100) => {
    answer(neurons, block);
    await service.sync();
  };
  return { source, repository, service, answer, apply };
}

/** No permit; a permit under the minimum stake; at it; with the stake unknown. */
const permitHolders = () => [
  metagraphNeuron(0),
  metagraphNeuron(1, { validator_permit: true, stake: MIN_STAKE - 1 }),
  metagraphNeuron(2, { validator_permit: true, stake: MIN_STAKE }),
  metagraphNeuron(3, { validator_permit: true, stake: null }),
];

const uids = (miners: { uid: number }[]) => miners.map((miner) => miner.uid).sort((a, b) => a - b);

/**
 * Why miners may not be called (MetagraphService.minerCalls), in the operator's words,
 * undefined while they may.
 */
function whyNoCalls(service: MetagraphService): string | undefined {
  const calls = service.minerCalls();
  return calls.allowed ? undefined : calls.detail;
}

/** The miner metagraphNeuron lists at `uid`, as its circuit and credibility name it. */
const minerAt = (uid: number) => ({ uid, hotkey: metagraphNeuron(uid).hotkey });

describe(MetagraphService.name, () => {
  beforeAll(() => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterAll(() => jest.restoreAllMocks());

  // Only these are ever called: a refused address is never contacted, a neuron without an axon
  // cannot be, and a validator is never asked for data.
  it('offers for calls only the miners with an axon at an allowed address', async () => {
    const { service, apply } = setUp();
    await apply([
      metagraphNeuron(0),
      metagraphNeuron(1, { axon_url: null }),
      metagraphNeuron(2, { axon_url: 'http://203.0.113.7:8091' }),
      metagraphNeuron(3, { validator_permit: true, stake: 50_000 }),
    ]);
    expect(uids(service.minersServingData())).toEqual([0]);
    expect(uids(service.minersNeverCalled())).toEqual([1, 2]);
  });

  // A churn audit: uids 3 and 7 announcing uid 6's address had its miner receive 12 calls from
  // our hotkey against a limit of 10. It counts a call signed for another hotkey before it
  // refuses it (401), and budgets are counted per hotkey: no neuron of an address that another
  // coldkey's neuron announces too is called, as one line says.
  it("offers no neuron of an axon address that another coldkey's neuron announces, and says which", async () => {
    const { service, apply } = setUp();
    const log = jest.spyOn(Logger.prototype, 'log');
    log.mockClear();
    await apply([
      metagraphNeuron(0),
      metagraphNeuron(3, { axon_url: 'http://127.0.0.1:9006' }),
      metagraphNeuron(6),
      metagraphNeuron(7, { axon_url: 'HTTP://127.0.0.1:9006' }),
      // uid 6's address again, as an ipType-6 neuron's IPv4-mapped one (a review).
      metagraphNeuron(12, { axon_url: 'http://[::ffff:7f00:1]:9006' }),
      // Same host, another port: another axon.
      metagraphNeuron(8, { axon_url: 'http://127.0.0.1:9108' }),
      metagraphNeuron(9),
      // Neither serves: nothing shared.
      metagraphNeuron(10, { axon_url: null }),
      metagraphNeuron(11, { axon_url: null }),
    ]);
    expect(uids(service.minersServingData())).toEqual([0, 8, 9]);
    expect(uids(service.minersNeverCalled())).toEqual([3, 6, 7, 10, 11, 12]);
    const [line] = log.mock.calls
      .map(([text]) => String(text))
      .filter((text) => text.startsWith('metagraph'));
    expect(line).toContain(
      "; 4 neurons announcing an axon address another coldkey's neuron announces too, never contacted (uids 3, 6, 7, 12)",
    );

    // uid 7 moves away: 3 and 6 still share, 7 is called again.
    await apply([
      metagraphNeuron(0),
      metagraphNeuron(3, { axon_url: 'http://127.0.0.1:9006' }),
      metagraphNeuron(6),
      metagraphNeuron(7),
      metagraphNeuron(8, { axon_url: 'http://127.0.0.1:9108' }),
      metagraphNeuron(9),
    ]);
    expect(uids(service.minersServingData())).toEqual([0, 7, 8, 9]);
  });

  // One operator's hotkeys behind one address (netuid 1's recording has 102 of one coldkey at
  // one address): its own set-up, which a proxy routing by the axon's hotkey serves. Called.
  it('offers the neurons of one coldkey that share an address', async () => {
    const { service, apply } = setUp();
    const farm = { coldkey: 'coldkey-farm', axon_url: 'http://127.0.0.1:9500' };
    await apply([
      metagraphNeuron(0),
      metagraphNeuron(1, farm),
      metagraphNeuron(2, farm),
      metagraphNeuron(3, farm),
    ]);
    expect(uids(service.minersServingData())).toEqual([0, 1, 2, 3]);
    // Another coldkey's neuron joins them: none of them is called.
    await apply([
      metagraphNeuron(0),
      metagraphNeuron(1, farm),
      metagraphNeuron(2, farm),
      metagraphNeuron(3, farm),
      metagraphNeuron(4, { axon_url: farm.axon_url }),
    ]);
    expect(uids(service.minersServingData())).toEqual([0]);
  });

  // Subnet 13's rule: a permit with less than VALIDATOR_MIN_STAKE is a miner; with an unknown
  // stake the permit decides.
  it('counts a permit holder under the minimum stake as a miner, and only the others as validators', async () => {
    const { service, apply } = setUp();
    await apply(permitHolders());
    expect(uids(service.minersServingData())).toEqual([0, 1]);
    expect(uids(service.validators())).toEqual([2, 3]);
  });

  // Their indexes go with the sync (MinersRepository.syncNeurons): no index sync asks a
  // validator again, and no stored-data call may go to one (an audit's finding).
  it('names the validators to the repository by the same rule, for their indexes to go', async () => {
    const { repository, apply } = setUp();
    await apply(permitHolders());
    expect(repository.validators.sort()).toEqual([2, 3]);
  });

  it('neither calls nor counts the votes of neurons that left the metagraph', async () => {
    const { service, apply } = setUp();
    const validator = metagraphNeuron(3, { validator_permit: true, stake: 50_000 });
    await apply([
      metagraphNeuron(0),
      metagraphNeuron(1),
      metagraphNeuron(2, { axon_url: null }),
      validator,
    ]);
    // Two of four gone: not most of them, so the read is applied.
    await apply([metagraphNeuron(0), validator]);
    expect(uids(service.minersServingData())).toEqual([0]);
    expect(uids(service.minersNeverCalled())).toEqual([]);

    await apply([metagraphNeuron(0), metagraphNeuron(1)]);
    expect(uids(service.validators())).toEqual([]);
    expect(uids(service.minersServingData())).toEqual([0, 1]);
  });

  // A call queued before a metagraph was applied (the index sync's) is made only to the miner
  // still holding its uid, at the axon it serves now.
  it('finds a uid as it is now while it is still the miner of a hotkey: not once re-registered, a validator or gone', async () => {
    const { service, apply } = setUp();
    await apply([0, 1, 2, 3, 4, 5].map((uid) => metagraphNeuron(uid)));
    await apply([
      metagraphNeuron(0),
      metagraphNeuron(1, { hotkey: 'hotkey-new' }),
      metagraphNeuron(2, { validator_permit: true, stake: MIN_STAKE }),
      metagraphNeuron(4, { axon_url: null }),
      metagraphNeuron(5, { axon_url: 'http://127.0.0.1:9105' }),
    ]);
    const axonOf = (uid: number, hotkey: string) => service.registeredMiner(uid, hotkey)?.axonUrl;
    expect(axonOf(0, 'hotkey-0')).toBe('http://127.0.0.1:9000');
    expect(axonOf(1, 'hotkey-1')).toBeUndefined();
    expect(axonOf(1, 'hotkey-new')).toBe('http://127.0.0.1:9001');
    expect(axonOf(2, 'hotkey-2')).toBeUndefined();
    expect(axonOf(3, 'hotkey-3')).toBeUndefined();
    expect(axonOf(4, 'hotkey-4')).toBeNull();
    expect(axonOf(5, 'hotkey-5')).toBe('http://127.0.0.1:9105');
    expect(axonOf(0, 'hotkey-1')).toBeUndefined();
  });

  it('judges the own hotkey by the minimum stake too', async () => {
    const { service, apply } = setUp();
    await apply([
      metagraphNeuron(0),
      metagraphNeuron(1, { hotkey: OWN_HOTKEY, validator_permit: true, stake: MIN_STAKE - 1 }),
    ]);
    expect(service.hotkeyCheck()).toMatchObject({ standing: 'stake_too_low' });
  });

  // The circuit breaker reports states as calls fail and succeed (CredibilityRecorder).
  it('keeps a deregistered miner deregistered, and a refused address refused, whatever the circuit says', async () => {
    const { service, apply } = setUp();
    await apply([
      metagraphNeuron(0),
      metagraphNeuron(1),
      metagraphNeuron(2, { axon_url: 'http://203.0.113.7:8091' }),
    ]);
    await apply([metagraphNeuron(0), metagraphNeuron(2, { axon_url: 'http://203.0.113.7:8091' })]);
    service.updateState(minerAt(1), 'active');
    service.updateState(minerAt(2), 'active');
    service.updateState(minerAt(0), 'failing');
    expect(uids(service.minersServingData())).toEqual([0]);
    expect(service.minersServingData()[0].state).toBe('failing');
    expect([0, 1, 2].map((uid) => service.stateOf(minerAt(uid)))).toEqual([
      'failing',
      'deregistered',
      'address_refused',
    ]);
  });

  // Health and the miners gauge count from memory: through the main pool, a saturated one
  // answered health's count too late and it said 0 miners (an audit's finding).
  it('counts the registered neurons as health reports them, with no database read', async () => {
    const { service, apply, repository } = setUp();
    const neurons = [
      metagraphNeuron(0),
      metagraphNeuron(1, { validator_permit: true, stake: MIN_STAKE }),
      metagraphNeuron(2, { axon_url: 'http://203.0.113.7:8091' }),
      metagraphNeuron(3, { axon_url: null }),
      metagraphNeuron(4),
      metagraphNeuron(5),
    ];
    await apply([...neurons, metagraphNeuron(6)]);
    // Failing before, with no end: over (the same for one whose cooldown ended).
    repository.rows.get(5)!.state = 'failing';
    await apply(neurons);
    service.updateState(minerAt(4), 'failing');
    repository.listAll = () => Promise.reject(new Error('timeout exceeded when trying to connect'));

    expect(service.counts()).toEqual({
      total: 6,
      serving: 5,
      validators: 1,
      available: 2,
      addressRefused: 1,
    });
  });

  it('applies credibility written to the database to the miners in memory', async () => {
    const { service, apply } = setUp();
    await apply([metagraphNeuron(0), metagraphNeuron(1)]);
    service.updateCredibility(new Map([[1, 0.8]]));
    const credibility = new Map(service.minersServingData().map((m) => [m.uid, m.credibility]));
    expect(credibility).toEqual(
      new Map([
        [0, 0.5],
        [1, 0.8],
      ]),
    );
  });

  // Most neurons vanishing at once is a broken answer; exactly half is not "most".
  it('applies a read that drops exactly half of the registered neurons', async () => {
    const { service, apply } = setUp();
    await apply([metagraphNeuron(0), metagraphNeuron(1), metagraphNeuron(2), metagraphNeuron(3)]);
    await apply([metagraphNeuron(0), metagraphNeuron(1)]);
    expect((await service.status()).lastAttempt).toMatchObject({ ok: true });
    expect(uids(service.minersServingData())).toEqual([0, 1]);
  });

  // Neurons deregistered earlier are no loss of this read: only the registered ones count.
  it('judges a loss against the neurons registered now, not those deregistered before', async () => {
    const { service, apply } = setUp();
    await apply([metagraphNeuron(0), metagraphNeuron(1), metagraphNeuron(2), metagraphNeuron(3)]);
    await apply([metagraphNeuron(0), metagraphNeuron(1)]);
    // One of the two registered neurons gone (with 2 and 3 long gone): half, applied.
    await apply([metagraphNeuron(0)]);
    expect((await service.status()).lastAttempt).toMatchObject({ ok: true });
    expect(uids(service.minersServingData())).toEqual([0]);
  });

  it('refuses a read that drops most registered neurons, and keeps serving the last one', async () => {
    const { service, apply } = setUp();
    await apply([metagraphNeuron(0), metagraphNeuron(1), metagraphNeuron(2)]);
    await apply([metagraphNeuron(0)]);
    expect((await service.status()).lastAttempt).toMatchObject({
      ok: false,
      error: expect.stringMatching(/suspicious: it would deregister 2 of 3/),
    });
    expect(uids(service.minersServingData())).toEqual([0, 1, 2]);
  });

  // A read giving most uids new hotkeys (a node of another network with the same uid range, or
  // a bad answer) reset every miner's credibility and index at once (a chain-faults audit).
  it('refuses a read that gives most registered neurons new hotkeys, and keeps serving the last one', async () => {
    const { service, apply } = setUp();
    await apply([0, 1, 2, 3].map((uid) => metagraphNeuron(uid)));
    await apply([
      metagraphNeuron(0),
      metagraphNeuron(1, { hotkey: 'other-1' }),
      metagraphNeuron(2, { hotkey: 'other-2' }),
    ]);
    expect((await service.status()).lastAttempt).toMatchObject({
      ok: false,
      error: expect.stringMatching(
        /suspicious: it would deregister 1 and give 2 a new hotkey of 4 registered neurons at once/,
      ),
    });
    expect(service.minersServingData().map((miner) => miner.hotkey)).toEqual([
      'hotkey-0',
      'hotkey-1',
      'hotkey-2',
      'hotkey-3',
    ]);
    // Half on new hotkeys is not "most": applied.
    await apply([
      metagraphNeuron(0),
      metagraphNeuron(1),
      metagraphNeuron(2, { hotkey: 'other-2' }),
      metagraphNeuron(3, { hotkey: 'other-3' }),
    ]);
    expect((await service.status()).lastAttempt).toMatchObject({ ok: true });
  });

  // A real trim (subtensor's trim_to_max_allowed_uids) leaves the subnet smaller for good: the
  // guard refused it on every read, for ever, and the metagraph stayed stale.
  it('applies a suspicious answer the source keeps giving on reads in a row over minutes', async () => {
    const { service, apply } = setUp();
    const now = jest.spyOn(Date, 'now');
    try {
      let clock = 1_000_000;
      now.mockImplementation(() => clock);
      const warn = jest.spyOn(Logger.prototype, 'warn');
      await apply([0, 1, 2, 3, 4].map((uid) => metagraphNeuron(uid)));
      const trimmed = () => [metagraphNeuron(0), metagraphNeuron(1)];
      const step = Math.ceil(SUSPICIOUS_CONFIRM_MS / (SUSPICIOUS_CONFIRM_READS - 1));
      for (let read = 1; read < SUSPICIOUS_CONFIRM_READS; read += 1) {
        await apply(trimmed());
        expect((await service.status()).lastAttempt).toMatchObject({
          ok: false,
          error: expect.stringContaining(`read ${read} of ${SUSPICIOUS_CONFIRM_READS} in a row`),
        });
        clock += step;
      }
      expect(uids(service.minersServingData())).toEqual([0, 1, 2, 3, 4]);
      await apply(trimmed());
      expect((await service.status()).lastAttempt).toMatchObject({ ok: true });
      expect(uids(service.minersServingData())).toEqual([0, 1]);
      expect(warn).toHaveBeenCalledWith(
        expect.stringMatching(/accepted although it would deregister 3 of 5 .*\(a trim\)/),
      );
    } finally {
      now.mockRestore();
    }
  });

  // A glitch that comes back now and then is not a trim: a good read in between starts over,
  // and reads in a row that are quick are not enough.
  it('keeps refusing a suspicious answer broken by a good read, or not yet minutes old', async () => {
    const { service, apply } = setUp();
    const all = () => [0, 1, 2, 3, 4].map((uid) => metagraphNeuron(uid));
    await apply(all());
    await apply([metagraphNeuron(0)]);
    await apply(all());
    for (let read = 0; read < SUSPICIOUS_CONFIRM_READS + 2; read += 1)
      await apply([metagraphNeuron(0)]);
    expect((await service.status()).lastAttempt).toMatchObject({ ok: false });
    expect(uids(service.minersServingData())).toEqual([0, 1, 2, 3, 4]);
  });

  // The reads in a row are counted from the good read on, however long ago the first was.
  it('counts the reads in a row from the last good read, and never applies an empty answer', async () => {
    const { service, apply } = setUp();
    const now = jest.spyOn(Date, 'now');
    try {
      let clock = 1_000_000;
      now.mockImplementation(() => clock);
      const all = () => [0, 1, 2, 3, 4].map((uid) => metagraphNeuron(uid));
      const step = Math.ceil(SUSPICIOUS_CONFIRM_MS / (SUSPICIOUS_CONFIRM_READS - 1));
      await apply(all());
      await apply([metagraphNeuron(0)]);
      clock += step;
      await apply(all());
      for (let read = 1; read < SUSPICIOUS_CONFIRM_READS; read += 1) {
        clock += step;
        await apply([metagraphNeuron(0)]);
        expect((await service.status()).lastAttempt).toMatchObject({
          ok: false,
          error: expect.stringContaining(`read ${read} of ${SUSPICIOUS_CONFIRM_READS} in a row`),
        });
      }
      await apply(all());
      for (let read = 0; read < SUSPICIOUS_CONFIRM_READS + 1; read += 1) {
        clock += step;
        await apply([]);
      }
      expect((await service.status()).lastAttempt).toMatchObject({
        ok: false,
        error: expect.stringMatching(
          /deregister 5 of 5 registered neurons at once \(0 in the answer; an empty answer is never applied\)$/,
        ),
      });
      expect(uids(service.minersServingData())).toEqual([0, 1, 2, 3, 4]);
    } finally {
      now.mockRestore();
    }
  });

  // A metagraph stored before its netuid was: the same source's read is judged against it.
  it('judges a read against a stored metagraph without a netuid', async () => {
    const { service, repository, apply } = setUp();
    await apply([0, 1, 2, 3, 4].map((uid) => metagraphNeuron(uid)));
    repository.stored = { ...repository.stored!, netuid: null };
    await apply([metagraphNeuron(0)]);
    expect((await service.status()).lastAttempt).toMatchObject({
      ok: false,
      error: expect.stringContaining('refused as suspicious'),
    });
    expect(uids(service.minersServingData())).toEqual([0, 1, 2, 3, 4]);
  });

  // A devnet restarted with fewer miners rewrites its file once: refused then, the file read
  // again only when it changes, the gateway kept the old devnet's miners for ever.
  it("applies a devnet's smaller metagraph at once, and still judges a file's", async () => {
    const { service, source, apply } = setUp();
    const warn = jest.mocked(Logger.prototype.warn);
    await apply([0, 1, 2, 3, 4].map((uid) => metagraphNeuron(uid)));
    source.network = 'devnet';
    warn.mockClear();
    await apply([metagraphNeuron(0)]);
    expect((await service.status()).lastAttempt).toMatchObject({ ok: true });
    expect(uids(service.minersServingData())).toEqual([0]);
    expect(warn).not.toHaveBeenCalled();
    source.network = 'file';
    await apply([0, 1, 2].map((uid) => metagraphNeuron(uid)));
    await apply([metagraphNeuron(2)]);
    expect((await service.status()).lastAttempt).toMatchObject({ ok: false });
    expect(uids(service.minersServingData())).toEqual([0, 1, 2]);
  });

  // What health reports while the database is away: the devnet read at start, not `file`
  // (its METAGRAPH_FILE) because health had not read the stored metagraph before the outage.
  it('knows the network it last read: at start, from what stays in use, and from status', async () => {
    const { service, source, repository, apply } = setUp();
    expect(service.lastReadNetwork()).toBeNull();
    source.network = 'devnet';
    await apply([metagraphNeuron(0)]);
    expect(service.lastReadNetwork()).toBe('devnet');

    const restarted = setUp();
    restarted.repository.stored = repository.stored;
    restarted.source.next = new Error('file unreadable');
    await restarted.service.sync();
    expect(restarted.service.lastReadNetwork()).toBe('devnet');

    restarted.repository.stored = { ...repository.stored!, network: 'subtensor' };
    await restarted.service.status();
    expect(restarted.service.lastReadNetwork()).toBe('subtensor');
  });

  // NETUID (or the source) changed: the stored neurons are another subnet's.
  it('applies a read of another netuid or source without judging it against the stored one', async () => {
    const { service, source, repository, apply } = setUp();
    await apply([0, 1, 2, 3, 4].map((uid) => metagraphNeuron(uid)));
    repository.stored = { ...repository.stored!, netuid: 7 };
    await apply([metagraphNeuron(0)]);
    expect((await service.status()).lastAttempt).toMatchObject({ ok: true });
    expect(uids(service.minersServingData())).toEqual([0]);
    await apply([0, 1, 2].map((uid) => metagraphNeuron(uid)));
    (source as { description: string }).description = 'another source';
    await apply([metagraphNeuron(2)]);
    expect((await service.status()).lastAttempt).toMatchObject({ ok: true });
    expect(uids(service.minersServingData())).toEqual([2]);
  });

  // A file without `netuid` was stored as netuid 0 before it was read as NETUID's: its first
  // read after the upgrade is still judged (a review's finding).
  it('judges a read against a metagraph stored as netuid 0, as one of unknown netuid', async () => {
    const { service, repository, apply } = setUp();
    await apply([0, 1, 2].map((uid) => metagraphNeuron(uid)));
    repository.stored = { ...repository.stored!, netuid: 0 };
    await apply([metagraphNeuron(0)]);
    expect((await service.status()).lastAttempt).toMatchObject({
      ok: false,
      error: expect.stringMatching(/suspicious: it would deregister 2 of 3/),
    });
  });

  // A file of another netuid (or none, read as netuid 0 then) holding `"neurons": []`
  // deregistered every miner, unjudged (an audit's finding).
  it('refuses an empty read whatever its netuid or source', async () => {
    const { service, source, repository, apply } = setUp();
    await apply([0, 1, 2].map((uid) => metagraphNeuron(uid)));
    repository.stored = { ...repository.stored!, netuid: 7 };
    await apply([]);
    expect((await service.status()).lastAttempt).toMatchObject({
      ok: false,
      error: expect.stringMatching(/deregister 3 of 3 registered neurons at once \(0 in the/),
    });
    expect(uids(service.minersServingData())).toEqual([0, 1, 2]);
    (source as { description: string }).description = 'another source';
    await apply([]);
    expect((await service.status()).lastAttempt).toMatchObject({ ok: false });
    expect(repository.rows.get(1)).toMatchObject({ state: 'active' });
  });

  // A database first run on a file (a devnet's, a recording), restarted on a node it cannot
  // reach: the file's miners are not the node's network's.
  it("uses no miner of a metagraph stored from another source until the configured one's is read", async () => {
    const first = setUp();
    await first.apply([0, 1, 2].map((uid) => metagraphNeuron(uid)));
    const { service, source, repository, apply } = setUp();
    const warn = jest.mocked(Logger.prototype.warn);
    warn.mockClear();
    repository.stored = first.repository.stored;
    for (const [uid, row] of first.repository.rows) repository.rows.set(uid, row);
    source.description = 'subtensor wss://node netuid 13';
    source.next = new Error('could not connect');
    await service.sync();
    await service.sync();

    expect(service.minersServingData()).toEqual([]);
    expect(service.counts().total).toBe(0);
    expect(whyNoCalls(service)).toMatch(
      /stored metagraph \(file, from fake source, block 100\) is not from the configured source \(subtensor wss:\/\/node netuid 13\)/,
    );
    // What answers tell any key names neither source.
    expect(service.minerCalls()).toMatchObject({
      why: expect.not.stringMatching(/fake source|wss:/),
    });
    const status = await service.status();
    expect(status.stored).toBeUndefined();
    expect(status.storedNotInUse).toBe(whyNoCalls(service));
    expect(service.lastReadNetwork()).toBeNull();
    // Said once, and in the line of each failed read.
    expect(warn.mock.calls.filter(([line]) => String(line).startsWith('the stored'))).toHaveLength(
      1,
    );
    expect(jest.mocked(Logger.prototype.error)).toHaveBeenLastCalledWith(
      expect.stringMatching(/and the stored one is another source's \(file from fake source\)/),
    );

    await apply([metagraphNeuron(5)]);
    expect(uids(service.minersServingData())).toEqual([5]);
    expect(whyNoCalls(service)).toBeUndefined();
    expect((await service.status()).stored).toMatchObject({
      source: 'subtensor wss://node netuid 13',
    });
  });

  // A reset testnet or local node: the operator learns that the chain changed, not that the
  // node lags behind.
  it("records the chain a read came from, and warns when it is another than the stored one's", async () => {
    const { source, repository, apply } = setUp();
    const warn = jest.mocked(Logger.prototype.warn);
    const read = source.read.bind(source);
    source.read = async () => ({ ...(await read()), genesis_hash: '0xnew' });
    repository.otherChain = { genesisHash: '0xold', block: 50_000 };
    await apply([metagraphNeuron(0)], 10);
    expect(repository.stored).toMatchObject({ block: 10, genesisHash: '0xnew' });
    expect(warn).toHaveBeenCalledWith(
      expect.stringMatching(
        /another chain \(genesis 0xnew at block 10\) than the stored one \(genesis 0xold at block 50000\)/,
      ),
    );
  });

  // Without the watch the metagraph read at start would be served for ever.
  it('reads the source at start and whenever it says the metagraph changed, until shut down', async () => {
    const { source, service, answer } = setUp();
    answer([metagraphNeuron(0)]);
    await service.onApplicationBootstrap();
    expect(uids(service.minersServingData())).toEqual([0]);

    answer([metagraphNeuron(0), metagraphNeuron(1)]);
    await source.changed?.();
    expect(uids(service.minersServingData())).toEqual([0, 1]);

    await service.onModuleDestroy();
    expect(source.changed).toBeUndefined();
    // The node connection is let go.
    expect(source.closed).toBe(true);
  });

  // A node that accepts the connection and says nothing held the start (and so listening, and
  // health) for all of SUBTENSOR_TIMEOUT_MS, 30 s by default.
  describe('a first read that does not end within the start-up wait', () => {
    afterEach(() => jest.useRealTimers());

    it('lets the start go on with what is stored, and watches the source once the read ends', async () => {
      const stored = setUp();
      await stored.apply([metagraphNeuron(0)]);
      const { source, service } = setUp(stored.repository);
      let answer: (metagraph: MetagraphFile) => void = () => undefined;
      source.read = () => new Promise((resolve) => (answer = resolve));
      jest.useFakeTimers();
      let started = false;
      let ready = false;
      void service.onApplicationBootstrap().then(() => (started = true));
      void service.ready.then(() => (ready = true));
      await jest.advanceTimersByTimeAsync(START_WAIT_MS);
      expect(started).toBe(true);
      // Served meanwhile, and said to be unread (health: the chain "not read yet").
      expect(uids(service.minersServingData())).toEqual([0]);
      expect((await service.status()).lastAttempt).toBeNull();
      expect(ready).toBe(false);
      expect(source.changed).toBeUndefined();

      answer({
        netuid: 13,
        block: 101,
        updated_at: '',
        neurons: [metagraphNeuron(0), metagraphNeuron(1)],
      });
      await jest.advanceTimersByTimeAsync(0);
      expect(ready).toBe(true);
      expect(uids(service.minersServingData())).toEqual([0, 1]);
      expect(source.changed).toBeDefined();
      await service.onModuleDestroy();
    });
  });

  // A database slow to answer makes the first read late, and the stored miners' read too: the
  // start waited that out, up to the statement timeout (a cold-start audit).
  it('lets the start go on when the stored miners are not read within the start-up wait either', async () => {
    const stored = setUp();
    await stored.apply([metagraphNeuron(0)]);
    const { source, service } = setUp(stored.repository);
    source.read = () => new Promise(() => undefined);
    let answer: () => void = () => undefined;
    const listAll = stored.repository.listAll.bind(stored.repository);
    stored.repository.listAll = () => new Promise((resolve) => (answer = () => resolve(listAll())));
    jest.useFakeTimers();
    try {
      let started = false;
      void service.onApplicationBootstrap().then(() => (started = true));
      await jest.advanceTimersByTimeAsync(2 * START_WAIT_MS - 1);
      expect(started).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      expect(started).toBe(true);
      expect(service.minersServingData()).toEqual([]);
      // Served once read.
      answer();
      await jest.advanceTimersByTimeAsync(0);
      expect(uids(service.minersServingData())).toEqual([0]);
    } finally {
      jest.useRealTimers();
      await service.onModuleDestroy();
    }
  });

  // Two reads applied at once could leave an older answer applied over a newer one.
  it('reads and applies one metagraph at a time, however often sync is called', async () => {
    const { source, service, answer } = setUp();
    answer([metagraphNeuron(0)]);
    let reading = 0;
    let most = 0;
    const read = source.read.bind(source);
    source.read = async () => {
      reading += 1;
      most = Math.max(most, reading);
      await new Promise((resolve) => setTimeout(resolve, 5));
      reading -= 1;
      return read();
    };
    await Promise.all([service.sync(), service.sync(), service.sync()]);
    expect(most).toBe(1);
  });

  // A hotkey registered again lands on another uid: operators look for it there.
  it('logs the own hotkey again when it moves to another uid, and not while nothing changes', async () => {
    const { apply } = setUp();
    const log = jest.mocked(Logger.prototype.log);
    const own = { hotkey: OWN_HOTKEY, validator_permit: true, stake: 20_000 };
    const standingLines = () =>
      log.mock.calls.map(([line]) => String(line)).filter((line) => line.includes(OWN_HOTKEY));
    log.mockClear();
    await apply([metagraphNeuron(0), metagraphNeuron(1, own)]);
    await apply([metagraphNeuron(0), metagraphNeuron(1, own)]);
    expect(standingLines()).toEqual([expect.stringContaining('uid 1, validator permit')]);
    await apply([metagraphNeuron(0), metagraphNeuron(2, own)]);
    expect(standingLines()).toHaveLength(2);
    expect(standingLines()[1]).toContain('uid 2, validator permit');
  });

  // An operator's audit: LOG_LEVEL=debug added nothing below info. Each reload of the miners
  // from the database says how many neurons, of which block, and whether they are in use.
  describe('the debug line of a reload', () => {
    const applyAt = (level: string) =>
      linesLoggedBy(MetagraphService.name, level, async () => {
        const { apply } = setUp();
        await apply([metagraphNeuron(0), metagraphNeuron(1)], 321);
      });

    it('says the neurons reloaded, their block and that they are in use, at debug', async () => {
      const lines = (await applyAt('debug')).filter((line) => line.level === 20);
      expect(lines).toEqual([
        expect.objectContaining({
          neurons: 2,
          block: 321,
          in_use: true,
          msg: 'miners reloaded: 2 neurons (block 321)',
        }),
      ]);
      // Counts, not the neurons: no hotkey, coldkey or axon.
      expect(JSON.stringify(lines)).not.toContain(metagraphNeuron(0).hotkey);
      expect(JSON.stringify(lines)).not.toContain('axon');
    });

    it('writes none at info', async () => {
      expect((await applyAt('info')).filter((line) => line.level < 30)).toEqual([]);
    });
  });
});
