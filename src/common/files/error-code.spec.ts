import { errorCode } from './error-code';

describe(errorCode.name, () => {
  it('names a failure by its code, else by its message', () => {
    expect(errorCode(Object.assign(new Error('no space left'), { code: 'ENOSPC' }))).toBe('ENOSPC');
    expect(errorCode(new Error('worker exited'))).toBe('worker exited');
    expect(errorCode('text')).toBe('text');
  });
});
