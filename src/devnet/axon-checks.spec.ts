import { AxonGuard } from './axon-checks';
import {
  buildSignedRequest,
  DENDRITE_VERSION,
  EMPTY_BODY_HASH,
  newTerminal,
  signatureMessage,
  SignedRequest,
} from '../network/bittensor/dendrite';
import { cryptoReady, Sr25519Keypair } from '../network/bittensor/keypair';

/**
 * The axon's checks at their edges, against bittensor's `axon.py` (`default_verify`,
 * `allowed_nonce_window_ns`) and the wire spec (§1). The gateway's client tests call through
 * AxonGuard as "a real axon": where it takes what a real axon refuses, they prove too little;
 * where it refuses what a real axon takes, they fail for nothing.
 */

const gateway = Sr25519Keypair.fromUri('//Gateway');
const other = Sr25519Keypair.fromUri('//Other');
const miner = Sr25519Keypair.fromUri('//Miner');
/** The axon's clock, in milliseconds. */
const NOW = 1_800_000_000_000;

beforeAll(() => cryptoReady());

function guardAt(nowMs: number | (() => number) = NOW, clockRate?: number): AxonGuard {
  return new AxonGuard({
    hotkey: miner.address,
    serves: (synapse) => synapse === 'GetMinerIndex',
    blacklist: () => null,
    nowMs: typeof nowMs === 'number' ? () => nowMs : nowMs,
    clockRate,
  });
}

interface Signing {
  /** The dendrite's clock when it signed (the nonce), in milliseconds. */
  atMs?: number;
  timeoutSeconds?: number;
  uuid?: string;
  signer?: Sr25519Keypair;
}

/** A GetMinerIndex request as the gateway's dendrite signs it. */
function signed({ atMs = NOW, timeoutSeconds = 12, uuid, signer = gateway }: Signing = {}) {
  const terminal = newTerminal(signer.address, atMs);
  return buildSignedRequest(
    'GetMinerIndex',
    { version: 4 },
    timeoutSeconds,
    { ip: '127.0.0.1', port: 8091, hotkey: miner.address },
    uuid === undefined ? terminal : { ...terminal, uuid },
    (message) => signer.sign(message),
  );
}

/** Checks the request with some headers replaced (undefined: left out). */
function check(
  guard: AxonGuard,
  request: SignedRequest,
  changes: Record<string, string | undefined> = {},
  body = request.body,
) {
  const headers: Record<string, string> = { ...request.headers };
  for (const [name, value] of Object.entries(changes))
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  return guard.check('/GetMinerIndex', headers, body);
}

const TOO_OLD = { ok: false, status: 401, message: expect.stringContaining('Nonce is too old') };

describe('the first nonce of a hotkey and uuid', () => {
  // The SDK refuses a first nonce at or before now − 4 s − the request's timeout.
  it('is taken just inside 4 s plus the timeout, and refused at the edge', () => {
    expect(check(guardAt(), signed({ atMs: NOW - 15_999 }))).toMatchObject({ ok: true });
    expect(check(guardAt(), signed({ atMs: NOW - 16_000 }))).toMatchObject(TOO_OLD);
  });

  it("counts the request's own timeout: 120 s lets a nonce 2 minutes old through", () => {
    const request = signed({ atMs: NOW - 123_999, timeoutSeconds: 120 });
    expect(check(guardAt(), request)).toMatchObject({ ok: true });
    expect(check(guardAt(), signed({ atMs: NOW - 124_000, timeoutSeconds: 120 }))).toMatchObject(
      TOO_OLD,
    );
  });

  // from_headers passes `timeout=None` (the field's default of 12 never applies), and
  // allowed_nonce_window_ns counts `timeout or 0`.
  it('counts no timeout at all when the request names none: 4 s', () => {
    expect(check(guardAt(), signed({ atMs: NOW - 3_999 }), { timeout: undefined })).toMatchObject({
      ok: true,
    });
    expect(check(guardAt(), signed({ atMs: NOW - 4_000 }), { timeout: undefined })).toMatchObject(
      TOO_OLD,
    );
  });

  // The SDK's window is float arithmetic: now − 4 s − inf is −inf, which no nonce is at or
  // before; BigInt(Infinity) threw, and the devnet answered 500 "devnet miner failed".
  it.each(['Infinity', 'inf', '1e300', 'nan'])(
    'sets no bound with a timeout of %s, as the float window of an axon',
    (timeout) => {
      const yearOld = signed({ atMs: NOW - 365 * 86_400_000 });
      expect(check(guardAt(), yearOld, { timeout })).toMatchObject({ ok: true });
    },
  );

  it('takes a negative timeout as the SDK does: a narrower window, none at all for -inf', () => {
    expect(check(guardAt(), signed({ atMs: NOW - 999 }), { timeout: '-3' })).toMatchObject({
      ok: true,
    });
    expect(check(guardAt(), signed({ atMs: NOW - 1_000 }), { timeout: '-3' })).toMatchObject(
      TOO_OLD,
    );
    expect(check(guardAt(), signed({ atMs: NOW + 60_000 }), { timeout: '-inf' })).toMatchObject(
      TOO_OLD,
    );
  });

  // Under CLOCK_SIMULATION the window is real time: 16 s of transit, not 16 simulated ms' worth.
  it('is given 4 s plus the timeout of real time on a simulated clock, scaled by its rate', () => {
    const fast = guardAt(NOW, 120);
    expect(check(fast, signed({ atMs: NOW - 16_000 * 120 + 1 }))).toMatchObject({ ok: true });
    expect(check(fast, signed({ atMs: NOW - 16_000 * 120 }))).toMatchObject(TOO_OLD);
    const slow = guardAt(NOW, 0.5);
    expect(check(slow, signed({ atMs: NOW - 7_999 }))).toMatchObject({ ok: true });
    expect(check(slow, signed({ atMs: NOW - 8_000 }))).toMatchObject(TOO_OLD);
  });

  it('is judged by age only from dendrite version 7002000 on, as the SDK does', () => {
    const hourOld = signed({ atMs: NOW - 60 * 60_000 });
    expect(check(guardAt(), hourOld, { bt_header_dendrite_version: '7001999' })).toMatchObject({
      ok: true,
    });
    expect(check(guardAt(), hourOld, { bt_header_dendrite_version: undefined })).toMatchObject({
      ok: true,
    });
    expect(check(guardAt(), hourOld, { bt_header_dendrite_version: '7002000' })).toMatchObject(
      TOO_OLD,
    );
    expect(check(guardAt(), hourOld)).toMatchObject(TOO_OLD);
    expect(DENDRITE_VERSION).toBeGreaterThanOrEqual(7_002_000);
  });
});

describe('later nonces', () => {
  it('of the same hotkey and uuid need only be greater than the last, however old', () => {
    let clock = NOW;
    const guard = guardAt(() => clock);
    const uuid = 'a3b4c5d6-0000-4000-8000-000000000001';
    expect(check(guard, signed({ atMs: NOW - 10_000, uuid }))).toMatchObject({ ok: true });
    clock += 60_000;
    // Now 70 s old: a first nonce would be too old, a later one is compared with the last only.
    expect(check(guard, signed({ atMs: NOW - 9_999, uuid }))).toMatchObject({ ok: true });
    expect(check(guard, signed({ atMs: NOW - 9_999, uuid }))).toMatchObject({
      status: 401,
      message: expect.stringContaining('a newer one was last processed'),
    });
  });

  it('are kept per hotkey and uuid: another caller with the same uuid starts anew', () => {
    const guard = guardAt();
    const uuid = 'a3b4c5d6-0000-4000-8000-000000000002';
    expect(check(guard, signed({ uuid }))).toMatchObject({ ok: true });
    expect(check(guard, signed({ atMs: NOW - 1_000, uuid, signer: other }))).toMatchObject({
      ok: true,
      caller: other.address,
    });
  });

  it('are not kept from a refused request: a forged one cannot spend the next real nonce', () => {
    const guard = guardAt();
    const uuid = 'a3b4c5d6-0000-4000-8000-000000000003';
    const real = signed({ atMs: NOW - 1_000, uuid });
    const forged = signed({ uuid, signer: other });
    // The forgery names the gateway's hotkey with a later nonce, signed by another key.
    const forgedHeaders = { bt_header_dendrite_hotkey: gateway.address };
    expect(check(guard, forged, forgedHeaders)).toMatchObject({
      status: 401,
      message: expect.stringContaining('Signature mismatch'),
    });
    expect(check(guard, real)).toMatchObject({ ok: true });
  });
});

describe('headers', () => {
  it('answers 400 to a version or a timeout it cannot read (pydantic cannot cast them)', () => {
    const unreadable = ['soon', '0x10', '', '1e', 'Infinityy'].map((timeout) => ({ timeout }));
    for (const changes of [{ bt_header_dendrite_version: 'ten' }, ...unreadable])
      expect(check(guardAt(), signed(), changes)).toMatchObject({ ok: false, status: 400 });
  });

  it('refuses a request without a nonce, even one signed over the missing nonce', () => {
    const request = signed();
    const { bt_header_dendrite_uuid: uuid } = request.headers;
    const message = signatureMessage(
      'undefined',
      gateway.address,
      miner.address,
      uuid,
      EMPTY_BODY_HASH,
    );
    const changes = {
      bt_header_dendrite_nonce: undefined,
      bt_header_dendrite_signature: gateway.sign(message),
    };
    expect(check(guardAt(), request, changes)).toMatchObject({
      status: 401,
      message: expect.stringContaining('Missing Nonce'),
    });
  });

  it('refuses a request without the body hash header, though signed over the right hash', () => {
    // The axon signs over the header's value, '' when absent, and compares it with the body's.
    expect(check(guardAt(), signed(), { computed_body_hash: undefined })).toMatchObject({
      status: 401,
      message: expect.stringContaining('Signature mismatch'),
    });
  });
});

describe('the body', () => {
  // The axon's middleware verifies the headers; the body is read only after, by the route.
  it('is read after the signature: a forged call is 401 and a signed one spends its nonce', () => {
    const guard = guardAt();
    const forged = signed({ signer: other });
    const forgedHeaders = { bt_header_dendrite_hotkey: gateway.address };
    expect(check(guard, forged, forgedHeaders, '{not json')).toMatchObject({ status: 401 });
    const request = signed();
    expect(check(guard, request, {}, '{not json')).toMatchObject({ status: 422 });
    expect(check(guard, request)).toMatchObject({
      status: 401,
      message: expect.stringContaining('a newer one was last processed'),
    });
  });

  it('answers 500 to a JSON body that is not an object: no synapse can be built from it', () => {
    for (const body of ['[]', '4', 'null'])
      expect(check(guardAt(), signed(), {}, body)).toMatchObject({ ok: false, status: 500 });
  });

  it('hands the handler the parsed body and the caller', () => {
    const request = signed();
    expect(check(guardAt(), request)).toEqual({
      ok: true,
      synapse: 'GetMinerIndex',
      caller: gateway.address,
      body: JSON.parse(request.body) as object,
    });
  });
});
