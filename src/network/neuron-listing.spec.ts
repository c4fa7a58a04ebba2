import { minerEntity } from '../../test/support/neurons';
import { BudgetLeft } from './transport/call-budgets';
import { SynapseName } from '../common/synapse-names';
import { neuronListing, neuronState } from './neuron-listing';

const MIN_STAKE = 10_000;

describe(neuronState.name, () => {
  it('names a validator so whatever its axon and circuit', () => {
    const validator = { validatorPermit: true, stake: MIN_STAKE };
    expect(neuronState(minerEntity(7, { ...validator, axonUrl: null }), MIN_STAKE)).toBe(
      'validator',
    );
    expect(neuronState(minerEntity(7, { ...validator, state: 'failing' }), MIN_STAKE)).toBe(
      'validator',
    );
  });

  // Subnet 13 counts a permit under the minimum stake as a miner.
  it('names a permit holder under the minimum stake by its state as a miner', () => {
    expect(
      neuronState(minerEntity(7, { validatorPermit: true, stake: MIN_STAKE - 1 }), MIN_STAKE),
    ).toBe('active');
  });

  it('tells a miner without an axon, at a refused address, with an open circuit, or active', () => {
    expect(neuronState(minerEntity(7, { axonUrl: null, state: 'failing' }), MIN_STAKE)).toBe(
      'not_serving',
    );
    expect(neuronState(minerEntity(7, { state: 'address_refused' }), MIN_STAKE)).toBe(
      'address_refused',
    );
    const failing = minerEntity(7, { state: 'failing', failingUntil: new Date(10_000) });
    expect(neuronState(failing, MIN_STAKE, 9_999)).toBe('failing');
    expect(neuronState(minerEntity(7), MIN_STAKE)).toBe('active');
  });

  // Its circuit's cooldown is over: the circuit lets a call through, wherever it opened.
  it('names a miner whose failing state ended active', () => {
    const failing = minerEntity(7, { state: 'failing', failingUntil: new Date(10_000) });
    expect(neuronState(failing, MIN_STAKE, 10_000)).toBe('active');
    expect(neuronState({ ...failing, failingUntil: null }, MIN_STAKE, 0)).toBe('active');
  });
});

describe(neuronListing.name, () => {
  const left = (entries: [string, number][]) =>
    new Map(entries.map(([hotkey, calls]) => [hotkey, { left: calls } as BudgetLeft]));

  it('shows the axon as host:port, and the calls left of each budgeted synapse', () => {
    const budgets = new Map<SynapseName, ReadonlyMap<string, BudgetLeft>>([
      ['GetMinerIndex', left([['hotkey-7', 0]])],
      ['OnDemandRequest', left([['hotkey-7', 3]])],
      // A synapse without a budget leaves every miner Infinity calls: no bound, shown as null.
      ['GetContentsByBuckets', left([['hotkey-7', Infinity]])],
      // A miner the budget does not list has no bound either.
      ['GetDataEntityBucket', left([['hotkey-8', 2]])],
    ]);
    const listing = neuronListing(
      minerEntity(7, { axonUrl: 'http://127.0.0.1:8091' }),
      budgets,
      MIN_STAKE,
    );
    expect(listing).toMatchObject({
      uid: 7,
      hotkey: 'hotkey-7',
      coldkey: 'coldkey-7',
      axon: '127.0.0.1:8091',
      stake: 10,
      state: 'active',
    });
    expect(listing.callBudgetLeft).toEqual({
      GetMinerIndex: 0,
      OnDemandRequest: 3,
      GetContentsByBuckets: null,
      GetDataEntityBucket: null,
    });
  });

  // The listing's state is what operators filter validators by (?state=validator).
  it('lists a permit holder under the minimum stake as a miner', () => {
    const lowStake = minerEntity(7, { validatorPermit: true, stake: MIN_STAKE - 1 });
    expect(neuronListing(lowStake, new Map(), MIN_STAKE).state).toBe('active');
  });

  // A URL's `host` leaves out its scheme's default port: the schema promises host:port.
  it('shows the port of an axon on port 80 too, and an IPv6 address in brackets', () => {
    const axon = (axonUrl: string) =>
      neuronListing(minerEntity(7, { axonUrl }), new Map(), MIN_STAKE).axon;
    expect(axon('http://1.2.3.4:80')).toBe('1.2.3.4:80');
    expect(axon('http://[2001:db8::1]:80')).toBe('[2001:db8::1]:80');
    expect(axon('http://[2001:db8::1]:8091')).toBe('[2001:db8::1]:8091');
  });

  it('shows no axon for a neuron that serves none', () => {
    expect(neuronListing(minerEntity(7, { axonUrl: null }), new Map(), MIN_STAKE).axon).toBeNull();
  });
});
