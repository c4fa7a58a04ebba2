import { nodeAddress, urlsAsAddresses } from './node-address';

describe(nodeAddress.name, () => {
  it('keeps the scheme and the host only', () => {
    expect(nodeAddress('wss://user:secret@node.example:8443/ws?apikey=secret')).toBe(
      'wss://node.example:8443',
    );
    expect(nodeAddress('ws://user:secret@127.0.0.1:99999')).toBe('the configured node');
  });
});

describe(urlsAsAddresses.name, () => {
  it('cuts every URL in a text to its scheme and host, keeping the punctuation around it', () => {
    expect(
      urlsAsAddresses(
        'disconnected from ws://gateway:s3cret@127.0.0.1:9944: 1006:: Abnormal Closure; ' +
          "see 'wss://node.example/path/s3cret?token=s3cret', (https://a.example:8443/?k=s3cret).",
      ),
    ).toBe(
      'disconnected from ws://127.0.0.1:9944: 1006:: Abnormal Closure; ' +
        "see 'wss://node.example', (https://a.example:8443).",
    );
  });

  it('replaces the configured URLs whole, a space in the query included', () => {
    const url = 'ws://127.0.0.1:9944/?token=two words';
    expect(urlsAsAddresses(`dropped ${url}: 1006`, [url])).toBe(
      'dropped ws://127.0.0.1:9944: 1006',
    );
  });

  it('names a URL it cannot read as the configured node', () => {
    expect(urlsAsAddresses('Invalid URL: ws://u:s3cret@host:99999/x')).toBe(
      'Invalid URL: the configured node',
    );
  });

  it('leaves a text without URLs as it is', () => {
    expect(urlsAsAddresses('connect ECONNREFUSED 127.0.0.1:9944')).toBe(
      'connect ECONNREFUSED 127.0.0.1:9944',
    );
  });
});
