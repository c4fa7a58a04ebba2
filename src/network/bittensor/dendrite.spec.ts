import { loadVectors } from '../../../test/support/bittensor-fixtures';
import { AxonGuard } from '../../devnet/axon-checks';
import {
  buildSignedRequest,
  DENDRITE_VERSION,
  EMPTY_BODY_HASH,
  newTerminal,
  signatureMessage,
} from './dendrite';
import { cryptoReady, Sr25519Keypair, verifySignature } from './keypair';

const vectors = loadVectors();
const python = vectors.dendrite_signatures[0].headers;
const parts = {
  nonce: python.bt_header_dendrite_nonce,
  dendrite: python.bt_header_dendrite_hotkey,
  axon: python.bt_header_axon_hotkey,
  uuid: python.bt_header_dendrite_uuid,
  hash: python.computed_body_hash,
};
const pythonSignature = python.bt_header_dendrite_signature;
const message = (changed: Partial<typeof parts> = {}) => {
  const { nonce, dendrite, axon, uuid, hash } = { ...parts, ...changed };
  return signatureMessage(nonce, dendrite, axon, uuid, hash);
};

beforeAll(() => cryptoReady());

describe('the signed message', () => {
  it('hashes the empty body with SHA3-256, as the recorded dendrite did', () => {
    expect(EMPTY_BODY_HASH).toBe(vectors.sha3_256_of_empty_string);
    expect(EMPTY_BODY_HASH).toBe(parts.hash);
  });

  it("accepts the Python dendrite's signature over nonce.hotkey.axon.uuid.hash", () => {
    expect(verifySignature(message(), pythonSignature, parts.dendrite)).toBe(true);
  });

  it.each([
    ['nonce', { nonce: (BigInt(parts.nonce) + 1n).toString() }],
    ['dendrite hotkey', { dendrite: vectors.sr25519.dev_alice_ss58 }],
    ['axon hotkey', { axon: vectors.sr25519.dev_alice_ss58 }],
    ['uuid', { uuid: parts.uuid.replace(/^0/, '1') }],
    ['body hash', { hash: 'b'.repeat(64) }],
  ])('refuses it when the %s is changed', (_, changed) => {
    expect(verifySignature(message(changed), pythonSignature, parts.dendrite)).toBe(false);
  });

  it('refuses it when the body hash is left out', () => {
    const withoutHash = `${parts.nonce}.${parts.dendrite}.${parts.axon}.${parts.uuid}`;
    expect(verifySignature(withoutHash, pythonSignature, parts.dendrite)).toBe(false);
  });

  it('refuses a changed signature, another signer, and garbage without throwing', () => {
    const flipped = `${pythonSignature.slice(0, -1)}${pythonSignature.endsWith('0') ? '1' : '0'}`;
    expect(verifySignature(message(), flipped, parts.dendrite)).toBe(false);
    expect(verifySignature(message(), pythonSignature, parts.axon)).toBe(false);
    expect(verifySignature(message(), '0x1234', parts.dendrite)).toBe(false);
    expect(verifySignature(message(), `0x${'ff'.repeat(64)}`, parts.dendrite)).toBe(false);
    expect(verifySignature(message(), pythonSignature, 'not an address')).toBe(false);
  });
});

describe(AxonGuard.name, () => {
  const nonceMs = Number(BigInt(parts.nonce) / 1_000_000n);
  const guardFor = (axonHotkey: string, nowMs = nonceMs + 1000) =>
    new AxonGuard({
      hotkey: axonHotkey,
      serves: (synapse) => synapse === 'Synapse',
      blacklist: () => null,
      nowMs: () => nowMs,
    });
  const pythonHeaders = { ...python, bt_header_dendrite_version: '7002000', timeout: '12.0' };

  it("accepts the Python dendrite's request once, then refuses the replayed nonce", () => {
    const guard = guardFor(parts.axon);
    expect(guard.check('/Synapse', pythonHeaders, '{}')).toMatchObject({ ok: true });
    expect(guard.check('/Synapse', pythonHeaders, '{}')).toMatchObject({
      ok: false,
      status: 401,
      message: expect.stringContaining('a newer one was last processed'),
    });
  });

  it('refuses it at an axon with another hotkey, and when it is too old', () => {
    expect(
      guardFor(vectors.sr25519.dev_alice_ss58).check('/Synapse', pythonHeaders, '{}'),
    ).toMatchObject({
      status: 401,
      message: expect.stringContaining('Signature mismatch'),
    });
    expect(
      guardFor(parts.axon, nonceMs + 17_000).check('/Synapse', pythonHeaders, '{}'),
    ).toMatchObject({
      status: 401,
      message: expect.stringContaining('Nonce is too old'),
    });
  });

  it('answers an unknown synapse 404 and a blacklisted caller 403, before the signature', () => {
    const guard = new AxonGuard({
      hotkey: parts.axon,
      serves: (synapse) => synapse === 'Synapse',
      blacklist: (caller) => `Unrecognized hotkey ${caller}`,
      nowMs: () => nonceMs,
    });
    expect(guard.check('/Other', pythonHeaders, '{}')).toMatchObject({ status: 404 });
    const unsigned = { ...pythonHeaders, bt_header_dendrite_signature: '0x00' };
    expect(guard.check('/Synapse', unsigned, '{}')).toMatchObject({ status: 403 });
  });

  it('answers unreadable headers 400', () => {
    const garbled = { ...pythonHeaders, bt_header_dendrite_nonce: 'soon' };
    expect(guardFor(parts.axon).check('/Synapse', garbled, '{}')).toMatchObject({ status: 400 });
  });

  it('answers a changed body hash 401 (it is signed), and a signed wrong one 500', () => {
    const changed = { ...pythonHeaders, computed_body_hash: 'a'.repeat(64) };
    expect(guardFor(parts.axon).check('/Synapse', changed, '{}')).toMatchObject({ status: 401 });
    const signer = Sr25519Keypair.fromUri('//Signer');
    const nonce = BigInt(nonceMs) * 1_000_000n;
    const wrongHash = 'a'.repeat(64);
    const headers = {
      ...pythonHeaders,
      bt_header_dendrite_hotkey: signer.address,
      bt_header_dendrite_nonce: nonce.toString(),
      computed_body_hash: wrongHash,
      bt_header_dendrite_signature: signer.sign(
        signatureMessage(nonce, signer.address, parts.axon, parts.uuid, wrongHash),
      ),
    };
    expect(guardFor(parts.axon).check('/Synapse', headers, '{}')).toMatchObject({
      status: 500,
      message: expect.stringContaining('Hash mismatch'),
    });
  });
});

describe(buildSignedRequest.name, () => {
  const gateway = Sr25519Keypair.fromUri('//Gateway');
  const miner = Sr25519Keypair.fromUri('//Miner');
  const axon = { ip: '127.0.0.1', port: 8091, hotkey: miner.address };

  it('builds what an axon accepts: headers, URL and a body carrying the exact nonce', () => {
    const terminal = newTerminal(gateway.address, Date.now());
    const request = buildSignedRequest(
      'GetMinerIndex',
      { version: 4 },
      120,
      axon,
      terminal,
      (text) => gateway.sign(text),
    );
    expect(request.url).toBe('http://127.0.0.1:8091/GetMinerIndex');
    expect(request.headers).toMatchObject({
      name: 'GetMinerIndex',
      timeout: '120.0',
      bt_header_axon_hotkey: miner.address,
      bt_header_dendrite_hotkey: gateway.address,
      bt_header_dendrite_version: String(DENDRITE_VERSION),
      bt_header_dendrite_nonce: terminal.nonce.toString(),
      computed_body_hash: EMPTY_BODY_HASH,
    });
    expect(request.body).toContain(`"nonce":${terminal.nonce.toString()}`);
    // The miner's handler reads the synapse from the body: its dendrite and axon objects carry
    // what the headers say, as a Python dendrite sends them.
    const body = JSON.parse(request.body) as Record<string, unknown>;
    expect(body).toMatchObject({
      version: 4,
      name: 'GetMinerIndex',
      computed_body_hash: request.headers.computed_body_hash,
      dendrite: {
        hotkey: gateway.address,
        uuid: terminal.uuid,
        version: DENDRITE_VERSION,
        signature: request.headers.bt_header_dendrite_signature,
      },
      axon: { hotkey: miner.address, port: 8091 },
    });
    const guard = new AxonGuard({
      hotkey: miner.address,
      serves: (synapse) => synapse === 'GetMinerIndex',
      blacklist: () => null,
      nowMs: () => Date.now(),
    });
    expect(guard.check('/GetMinerIndex', request.headers, request.body)).toMatchObject({
      ok: true,
      caller: gateway.address,
      body: { version: 4 },
    });
  });

  it('gives every call its own uuid and the clock in nanoseconds as its nonce', () => {
    const first = newTerminal(gateway.address, 1_000);
    const second = newTerminal(gateway.address, 1_000);
    expect(second.uuid).not.toBe(first.uuid);
    expect(first.nonce).toBe(1_000_000_000n);
    expect(newTerminal(gateway.address, 500).nonce).toBe(500_000_000n);
  });

  it('brackets IPv6 axons in the URL', () => {
    const request = buildSignedRequest(
      'OnDemandRequest',
      {},
      10,
      { ...axon, ip: '::1' },
      newTerminal(gateway.address, Date.now()),
      (text) => gateway.sign(text),
    );
    expect(request.url).toBe('http://[::1]:8091/OnDemandRequest');
    expect(request.headers.timeout).toBe('10.0');
    // A global address, as the chain lists one: it starts with a digit, not a colon.
    const global = buildSignedRequest(
      'GetMinerIndex',
      {},
      10,
      { ...axon, ip: '2001:db8::1' },
      newTerminal(gateway.address, Date.now()),
      (text) => gateway.sign(text),
    );
    expect(global.url).toBe('http://[2001:db8::1]:8091/GetMinerIndex');
  });
});
