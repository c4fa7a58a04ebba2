import { API_VERSION } from '../../common/version';
import { answerTag } from './stats-conditions';

/** answerTag as a build serving interface `version` computes it. */
function answerTagOfVersion(version: string): typeof answerTag {
  let tagOf: typeof answerTag | undefined;
  jest.isolateModules(() => {
    jest.doMock('../../common/version', () => ({ API_VERSION: version }));
    ({ answerTag: tagOf } =
      jest.requireActual<typeof import('./stats-conditions')>('./stats-conditions'));
  });
  return tagOf!;
}

describe(answerTag.name, () => {
  afterEach(() => jest.dontMock('../../common/version'));

  // After an upgrade that reshapes an answer, the totals' version may not have moved: a client
  // holding the old shape must get the new one, not a 304.
  it('tags the same request apart under another interface version', () => {
    const request = ['labels', 'x', '7'];
    expect(answerTagOfVersion(API_VERSION)(request)).toBe(answerTag(request));
    expect(answerTagOfVersion(`${API_VERSION}-next`)(request)).not.toBe(answerTag(request));
  });
});
