import { plural } from './plural';

describe(plural.name, () => {
  it('writes the noun singular for one and plural otherwise', () => {
    expect(plural(1, 'item')).toBe('1 item');
    expect(plural(0, 'item')).toBe('0 items');
    expect(plural(3, 'newly registered task')).toBe('3 newly registered tasks');
  });
});
