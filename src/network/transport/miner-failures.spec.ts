import { WrongAnswerError } from '../sn13/messages';
import { classify, failureReasonOf, MinerCallError } from './miner-failures';

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
