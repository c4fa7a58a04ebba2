import { clientErrorText } from './client-error-text';

describe('clientErrorText', () => {
  it('is the message when there is one', () => {
    expect(clientErrorText(new Error('connect ECONNREFUSED 127.0.0.1:9944'))).toBe(
      'connect ECONNREFUSED 127.0.0.1:9944',
    );
    expect(clientErrorText({ type: 'error', message: 'socket hang up' })).toBe('socket hang up');
  });

  it('never comes back empty: the event’s error, the errors, the code, the event', () => {
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:9944');
    expect(clientErrorText({ type: 'error', message: '', error: refused })).toBe(refused.message);
    expect(
      clientErrorText(new AggregateError([refused, new Error('connect ECONNREFUSED ::1:9944')])),
    ).toBe('connect ECONNREFUSED 127.0.0.1:9944; connect ECONNREFUSED ::1:9944');
    expect(clientErrorText(Object.assign(new Error(''), { code: 'ECONNRESET' }))).toBe(
      'ECONNRESET',
    );
    expect(clientErrorText({ type: 'close', code: 1006 })).toBe(
      'close on the socket (code 1006), no reason given',
    );
    expect(clientErrorText(new Error(''))).toBe('no reason given');
    expect(clientErrorText(undefined)).toBe('no reason given');
  });
});
