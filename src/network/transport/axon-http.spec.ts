import { Readable } from 'node:stream';
import { axonOf, errorMessage, readCapped } from './axon-http';
import { MinerCallError } from './miner-failures';

/** A body arriving in chunks of `chunkBytes`, `totalBytes` in all. */
const bodyOf = (totalBytes: number, chunkBytes = 1024) =>
  Readable.from(
    Array.from({ length: Math.ceil(totalBytes / chunkBytes) }, (_, index) =>
      Buffer.alloc(Math.min(chunkBytes, totalBytes - index * chunkBytes), 'a'),
    ),
  );

describe(axonOf.name, () => {
  // The URL parser drops a scheme's default port: `http://host:80` has no port left to read.
  it('reads an axon on port 80 as port 80', () => {
    expect(axonOf({ hotkey: 'miner', axonUrl: 'http://203.0.113.5:80' })).toEqual({
      ip: '203.0.113.5',
      port: 80,
      hotkey: 'miner',
    });
  });

  it('reads an IPv6 axon without its brackets', () => {
    expect(axonOf({ hotkey: 'miner', axonUrl: 'http://[2001:db8::5]:8091' })).toMatchObject({
      ip: '2001:db8::5',
      port: 8091,
    });
  });

  // Axons speak plain HTTP on their port: anything else was called as http on port 80.
  it.each([
    'https://203.0.113.5:8091',
    'https://203.0.113.5',
    'http://203.0.113.5',
    'http://203.0.113.5:8091/axon',
    'http://203.0.113.5:8091/',
    'http://user:secret@203.0.113.5:8091',
    'http://203.0.113.5:8091?x=1',
    'http://203.0.113.5:8091#x',
    'http://203.0.113.5:0',
    'http://203.0.113.5:65536',
    'http://[zz]:8091',
  ])('refuses %s as a network failure, never calling it', (axonUrl) => {
    expect(() => axonOf({ hotkey: 'miner', axonUrl })).toThrow(
      new MinerCallError('network', `axon URL ${axonUrl} is not http://host:port`),
    );
  });
});

describe(readCapped.name, () => {
  it('keeps the first bytes of an error body over the cap, instead of failing', async () => {
    const text = await readCapped(bodyOf(10 * 1024), 4096, true);

    expect(text).toBe('a'.repeat(4096));
  });

  it('keeps the first bytes of a body sent in one chunk over the cap', async () => {
    expect(await readCapped(bodyOf(5000, 5000), 4096, true)).toBe('a'.repeat(4096));
    expect(await readCapped(bodyOf(5000, 3000), 4096, true)).toBe('a'.repeat(4096));
  });

  it('fails an answer over the cap as oversize', async () => {
    await expect(readCapped(bodyOf(10 * 1024), 4096, false)).rejects.toEqual(
      expect.objectContaining<Partial<MinerCallError>>({ reason: 'oversize' }),
    );
  });
});

describe(errorMessage.name, () => {
  // The message is the miner's text, repeated in logs and errors: a long one is cut.
  // The cut is marked, so that a reader can tell an excerpt from a miner's whole message.
  it('cuts the message of an axon error body to 200 characters, marked as cut', () => {
    expect(errorMessage(JSON.stringify({ message: 'x'.repeat(5_000) }))).toBe(
      `${'x'.repeat(200)}…`,
    );
    expect(errorMessage(JSON.stringify({ message: 'x'.repeat(200) }))).toBe('x'.repeat(200));
  });

  it('cuts a body that is not JSON to 200 characters, and names an empty one', () => {
    expect(errorMessage('<html>'.padEnd(5_000, '.'))).toBe(`<html>${'.'.repeat(194)}…`);
    expect(errorMessage('')).toBe('no message');
    expect(errorMessage('{"message": ""}')).toBe('no message');
  });

  // A miner's line break, ESC sequence or bidi override forged a second log line, live terminal
  // codes and a reversed line in the logs (a log audit's finding).
  it('escapes control and format characters, in a message and in a body that is not JSON', () => {
    const forged = 'EVIL\n{"level":60,"msg":"FORGED"}\u001b[31mRED\u202ereversed\r\n';
    expect(errorMessage(JSON.stringify({ message: forged }))).toBe(
      'EVIL\\u000a{"level":60,"msg":"FORGED"}\\u001b[31mRED\\u202ereversed\\u000d\\u000a',
    );
    expect(errorMessage('oops\u0007\u2028')).toBe('oops\\u0007\\u2028');
  });

  it('cuts by characters, never inside a surrogate pair', () => {
    expect(errorMessage(`${'x'.repeat(199)}\u{1F680}tail`)).toBe(`${'x'.repeat(199)}\u{1F680}…`);
    expect(errorMessage(`${'x'.repeat(199)}\u{1F680}`)).toBe(`${'x'.repeat(199)}\u{1F680}`);
  });
});
