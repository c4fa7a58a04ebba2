import { parseCorsOrigins } from './cors-origins';

describe(parseCorsOrigins.name, () => {
  it('takes origins as browsers send them, and no entry for an empty one', () => {
    expect(
      parseCorsOrigins(' https://app.example.com, http://localhost:5173,,https://[::1]:8443, '),
    ).toEqual(['https://app.example.com', 'http://localhost:5173', 'https://[::1]:8443']);
    expect(parseCorsOrigins('')).toEqual([]);
  });

  // The cors package compares Origin with each entry as a string: none of these ever matched.
  it.each([
    ['https://app.example.com/', ' (https://app.example.com?)'],
    ['app.example.com', ' (https://app.example.com?)'],
    ['https://App.Example.com', ' (https://app.example.com?)'],
    ['https://app.example.com:443', ' (https://app.example.com?)'],
    ['https://app.example.com/dashboard', ' (https://app.example.com?)'],
    ['https://user:secret@app.example.com', ' (https://app.example.com?)'],
    ['ftp://files.example.com', ''],
    ['localhost:5173', ' (https://localhost:5173?)'],
  ])('refuses %s, which no Origin header equals, naming its place only', (entry, meant) => {
    expect(() => parseCorsOrigins(`https://ok.example, ${entry}`)).toThrow(
      new Error(
        'entry 2 is not an origin as a browser sends it: http(s)://host[:port] in lower case, ' +
          `without a path, a trailing slash or the default port${meant}`,
      ),
    );
  });

  // A configuration audit's: the first alone was named, the next left for another start.
  it('names every entry it refuses at once', () => {
    expect(() => parseCorsOrigins('https://A.com,http://b.com/,ftp://c, *')).toThrow(
      new Error(
        'entry 1 is not an origin as a browser sends it: http(s)://host[:port] in lower case, ' +
          'without a path, a trailing slash or the default port (https://a.com?); entry 2 is not ' +
          'an origin as a browser sends it: http(s)://host[:port] in lower case, without a path, ' +
          'a trailing slash or the default port (http://b.com?); entry 3 is not an origin as a ' +
          'browser sends it: http(s)://host[:port] in lower case, without a path, a trailing ' +
          'slash or the default port; entry 4: no wildcard (*) is taken: list the origins ' +
          'browsers may call from, comma-separated (https://app.example.com)',
      ),
    );
  });

  it.each(['*', 'https://*.example.com'])('refuses %s, saying to list the origins', (entry) => {
    expect(() => parseCorsOrigins(entry)).toThrow(
      new Error(
        'entry 1: no wildcard (*) is taken: list the origins browsers may call from, comma-separated (https://app.example.com)',
      ),
    );
  });
});
