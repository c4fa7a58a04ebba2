import { createHash, randomUUID } from 'node:crypto';
import { pythonFloat } from '../../common/python-json';

/**
 * The request a Bittensor dendrite sends to an axon (bittensor `dendrite.py`, `synapse.py`):
 * `POST http://{ip}:{port}/{Synapse}` with the synapse as JSON in the body and the terminals'
 * details, the body hash and the signature in `bt_header_*` headers. Pure functions: the miner
 * client sends what they build, the devnet axons check it (devnet/axon-checks.ts).
 */

/** The version a bittensor 10.2.0 dendrite sends; ≥ 7002000 selects the current nonce rules. */
export const DENDRITE_VERSION = 10_002_000;

/**
 * SHA3-256 of the concatenated hashes of a synapse's `required_hash_fields`, lower-case hex. No
 * subnet 13 synapse declares any, so it is always the hash of the empty string.
 */
export const EMPTY_BODY_HASH = createHash('sha3-256').update('').digest('hex');

export interface AxonTarget {
  /** Host as the metagraph lists it (an IPv6 address without brackets). */
  ip: string;
  port: number;
  hotkey: string;
}

export interface DendriteTerminal {
  hotkey: string;
  /** Nanoseconds since the epoch. */
  nonce: bigint;
  uuid: string;
}

export interface SignedRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** What the dendrite signs: `{nonce}.{dendrite hotkey}.{axon hotkey}.{uuid}.{body hash}`. */
export function signatureMessage(
  nonce: bigint | string,
  dendriteHotkey: string,
  axonHotkey: string,
  uuid: string,
  bodyHash: string,
): string {
  return `${nonce}.${dendriteHotkey}.${axonHotkey}.${uuid}.${bodyHash}`;
}

/**
 * A fresh terminal per call: a new uuid, so that the axon's nonce memory (kept per hotkey and
 * uuid) starts anew, and concurrent calls to one miner can never arrive "out of order".
 */
export function newTerminal(hotkey: string, nowMs: number): DendriteTerminal {
  return { hotkey, nonce: nanoseconds(nowMs), uuid: randomUUID() };
}

/** Wall-clock nanoseconds (millisecond resolution is enough: the uuid keeps calls apart). */
function nanoseconds(nowMs: number): bigint {
  return BigInt(Math.floor(nowMs)) * 1_000_000n;
}

/**
 * Builds the signed request. `fields` are the synapse's own fields; `sign` signs a message with
 * the dendrite's hotkey and returns `0x` + hex.
 */
export function buildSignedRequest(
  synapse: string,
  fields: Record<string, unknown>,
  timeoutSeconds: number,
  axon: AxonTarget,
  dendrite: DendriteTerminal,
  sign: (message: string) => string,
): SignedRequest {
  const signature = sign(
    signatureMessage(dendrite.nonce, dendrite.hotkey, axon.hotkey, dendrite.uuid, EMPTY_BODY_HASH),
  );
  const timeout = pythonFloat(timeoutSeconds);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    name: synapse,
    timeout,
    bt_header_axon_ip: axon.ip,
    bt_header_axon_port: String(axon.port),
    bt_header_axon_hotkey: axon.hotkey,
    // The axon overwrites the dendrite's address with the peer address it sees.
    bt_header_dendrite_ip: '0.0.0.0',
    bt_header_dendrite_version: String(DENDRITE_VERSION),
    bt_header_dendrite_nonce: dendrite.nonce.toString(),
    bt_header_dendrite_uuid: dendrite.uuid,
    bt_header_dendrite_hotkey: dendrite.hotkey,
    bt_header_dendrite_signature: signature,
    // Parsed by the axon but not checked.
    header_size: '0',
    total_size: '0',
    computed_body_hash: EMPTY_BODY_HASH,
  };
  const empty = { status_code: null, status_message: null, process_time: null };
  const body = JSON.stringify({
    ...fields,
    name: synapse,
    timeout: timeoutSeconds,
    total_size: 0,
    header_size: 0,
    axon: {
      ...empty,
      ip: axon.ip,
      port: axon.port,
      version: null,
      nonce: null,
      uuid: null,
      hotkey: axon.hotkey,
      signature: null,
    },
    computed_body_hash: EMPTY_BODY_HASH,
  });
  const terminal = JSON.stringify({
    ...empty,
    ip: '0.0.0.0',
    port: null,
    version: DENDRITE_VERSION,
    uuid: dendrite.uuid,
    hotkey: dendrite.hotkey,
    signature,
  });
  // The nonce exceeds 2^53: JSON.stringify cannot write it as the integer Python sends.
  const withNonce = `{"nonce":${dendrite.nonce.toString()},${terminal.slice(1)}`;
  return {
    url: axonUrl(axon, synapse),
    headers,
    body: `${body.slice(0, -1)},"dendrite":${withNonce}}`,
  };
}

export function axonUrl(axon: Pick<AxonTarget, 'ip' | 'port'>, synapse: string): string {
  const host = axon.ip.includes(':') ? `[${axon.ip}]` : axon.ip;
  return `http://${host}:${axon.port}/${synapse}`;
}
