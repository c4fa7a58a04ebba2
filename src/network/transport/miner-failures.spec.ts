import { WrongAnswerError } from '../sn13/messages';
import {
  BudgetUnreadableError,
  classify,
  failureReasonOf,
  freesItsPlace,
  MinerCallError,
} from './miner-failures';

describe(failureReasonOf.name, () => {
  // On-demand answers count these in meta.miners_failed.reasons.
  it('names an answer of the wrong shape wrong_schema, a call error its reason, anything else network', () => {
    expect(failureReasonOf(new WrongAnswerError('data is not a list'))).toBe('wrong_schema');
    expect(failureReasonOf(new MinerCallError('oversize', 'too large'))).toBe('oversize');
    expect(failureReasonOf(new Error('socket hang up'))).toBe('network');
  });
});

describe(classify.name, () => {
  // What a refused address surfaces as from the connect-time lookup may not be our own class.
  it('classifies an error with the ADDRESS_REFUSED code as address_refused, not network', () => {
    const error = Object.assign(new Error('10.0.0.1 is outside MINER_ALLOWED_NETWORKS'), {
      code: 'ADDRESS_REFUSED',
    });

    expect(classify(error, 1_000)).toMatchObject({
      reason: 'address_refused',
      message: '10.0.0.1 is outside MINER_ALLOWED_NETWORKS',
    });
  });
});

describe(freesItsPlace.name, () => {
  const unsent = (error: MinerCallError) => Object.assign(error, { unsent: true });

  it("frees the place of a call refused unsent for the miner's own reason", () => {
    for (const reason of ['circuit_open', 'busy', 'no_budget', 'address_refused'] as const)
      expect(freesItsPlace(unsent(new MinerCallError(reason, reason)))).toBe(true);
  });

  it('keeps the place of a call that went out, whatever its reason', () => {
    expect(freesItsPlace(new MinerCallError('busy', 'HTTP 503'))).toBe(false);
    expect(freesItsPlace(new MinerCallError('timeout', 'no answer'))).toBe(false);
    expect(freesItsPlace(new Error('socket hang up'))).toBe(false);
  });

  it('keeps the place of a refusal that holds for every miner: shutdown, a budget unread', () => {
    expect(freesItsPlace(unsent(new MinerCallError('shutdown', 'abandoned')))).toBe(false);
    expect(freesItsPlace(unsent(new BudgetUnreadableError('OnDemandRequest', 'gone')))).toBe(false);
  });
});
