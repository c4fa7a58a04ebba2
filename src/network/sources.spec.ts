import { sourceOfId, sourceOfName, toSourceId, toSourceName } from './sources';

describe('sources on the wire', () => {
  it('maps reddit to 1 and x to 2, both ways', () => {
    expect(toSourceId('reddit')).toBe(1);
    expect(toSourceId('x')).toBe(2);
    expect(sourceOfId(1)).toBe('reddit');
    expect(sourceOfId('2')).toBe('x');
    expect(sourceOfId(3)).toBeUndefined();
  });

  it('maps reddit to REDDIT and x to X, and reads the name in any case', () => {
    expect(toSourceName('reddit')).toBe('REDDIT');
    expect(toSourceName('x')).toBe('X');
    expect(sourceOfName('Reddit')).toBe('reddit');
    expect(sourceOfName(' X ')).toBe('x');
    expect(sourceOfName('twitter')).toBeUndefined();
  });
});
