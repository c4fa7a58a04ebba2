import { IncomingHttpHeaders } from 'node:http';
import { verifySignature } from '../network/bittensor/keypair';
import { EMPTY_BODY_HASH, signatureMessage } from '../network/bittensor/dendrite';

/**
 * The checks a Bittensor axon makes of every request before its handler runs (bittensor
 * `axon.py`, `AxonMiddleware.dispatch` and `default_verify`), in the same order with the same
 * statuses: unknown synapse 404, unparsable headers 400, blacklist 403, nonce or signature 401;
 * then FastAPI's reading of the body, 422 for one that is not JSON (it parses the body before the
 * route's dependencies run), and the axon's `verify_body_integrity`, 500 for a body that is not
 * an object or whose hash does not match (an error raised in a dependency reaches the middleware,
 * which answers 500). The devnet's simulated axons run these; so can a test.
 */

export interface AxonRules {
  /** The axon's own hotkey: the signed message names it, whatever the request's header says. */
  hotkey: string;
  /** Whether the axon serves this synapse (has a handler attached for it). */
  serves(synapse: string): boolean;
  /** Why the caller may not call this synapse now, or null. Runs before the signature check. */
  blacklist(caller: string | undefined, synapse: string): string | null;
  /** The axon's clock, in milliseconds. */
  nowMs(): number;
  /**
   * Clock milliseconds per real one: 1, or CLOCK_SIMULATION's rate when the clock is simulated.
   * The nonce window bounds a request's time in transit, which a faster clock does not speed up,
   * so it is scaled by this (at 120, its 16 s would be 0.13 s of real time: one stalled
   * scheduler on a loaded machine, and the call refused as too old).
   */
  clockRate?: number;
}

export type AxonVerdict =
  | { ok: true; synapse: string; caller: string; body: Record<string, unknown> }
  | { ok: false; status: RefusalStatus; message: string };

type RefusalStatus = 400 | 401 | 403 | 404 | 422 | 500;

/**
 * The body a refusal is answered with: the axon's `{"message"}`, or FastAPI's own 422 detail for
 * a body that is not JSON.
 */
export function refusalBody(verdict: { status: RefusalStatus; message: string }): object {
  if (verdict.status !== 422) return { message: verdict.message };
  return { detail: [{ type: 'json_invalid', loc: ['body', 0], msg: verdict.message }] };
}

/** Dendrites at or above this version follow the current nonce rules. */
const NONCE_RULES_VERSION = 7_002_000;
/** A first nonce may be this much older than the axon's clock, plus the request's timeout. */
const ALLOWED_NONCE_DELTA_NS = 4_000_000_000;

export class AxonGuard {
  /** Last nonce accepted per `{dendrite hotkey}:{uuid}`. */
  private readonly nonces = new Map<string, bigint>();

  constructor(private readonly rules: AxonRules) {}

  check(path: string, headers: IncomingHttpHeaders, rawBody: string): AxonVerdict {
    const synapse = path.split('/')[1] ?? '';
    if (!this.rules.serves(synapse)) return refuse(404, `Synapse name '${synapse}' not found`);
    const parsed = parseHeaders(headers);
    if (!parsed) return refuse(400, `Improperly formatted request: headers of ${synapse}`);
    const reason = this.rules.blacklist(parsed.hotkey, synapse);
    if (reason !== null) return refuse(403, `Forbidden. Key is blacklisted: ${reason}.`);
    const unverified = this.verify(parsed);
    if (unverified !== null) return refuse(401, `Not Verified with error: ${unverified}`);
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      return refuse(422, 'JSON decode error');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return refuse(500, 'Internal Server Error: the body is not a JSON object');
    if (parsed.bodyHash !== EMPTY_BODY_HASH)
      return refuse(
        500,
        `Hash mismatch between header body hash ${parsed.bodyHash} and parsed body hash ${EMPTY_BODY_HASH}`,
      );
    return { ok: true, synapse, caller: parsed.hotkey!, body: body as Record<string, unknown> };
  }

  /** `default_verify`: the nonce rules, then the signature; the nonce is kept on success. */
  private verify(request: ParsedHeaders): string | null {
    const { hotkey, nonce, uuid, signature, version, timeoutSeconds } = request;
    if (nonce === undefined) return 'Missing Nonce';
    if (hotkey === undefined || uuid === undefined || signature === undefined)
      return 'Missing dendrite hotkey, uuid or signature';
    const key = `${hotkey}:${uuid}`;
    const last = this.nonces.get(key);
    if (version !== undefined && version >= NONCE_RULES_VERSION) {
      const nowNs = BigInt(Math.floor(this.rules.nowMs())) * 1_000_000n;
      const windowNs =
        (ALLOWED_NONCE_DELTA_NS + timeoutSeconds * 1e9) * (this.rules.clockRate ?? 1);
      if (last === undefined && atOrBefore(nonce, nowNs, windowNs)) return 'Nonce is too old';
    }
    if (last !== undefined && nonce <= last)
      return 'Nonce is too old, a newer one was last processed';
    const message = signatureMessage(nonce, hotkey, this.rules.hotkey, uuid, request.bodyHash);
    if (!verifySignature(message, signature, hotkey)) return 'Signature mismatch';
    this.nonces.set(key, nonce);
    return null;
  }
}

/**
 * Whether `nonce` lies at or before now − window, as the SDK's float arithmetic decides it
 * (`allowed_nonce_window_ns`): a window too long for a number (a timeout of `inf` or `1e300`)
 * reaches back without end, and so takes every nonce, as does a NaN one (NaN compares false);
 * one of −inf takes none. BigInt of an infinite window threw, a 500 where an axon answers.
 */
function atOrBefore(nonce: bigint, nowNs: bigint, windowNs: number): boolean {
  if (windowNs === Infinity || Number.isNaN(windowNs)) return false;
  if (windowNs === -Infinity) return true;
  return nonce <= nowNs - BigInt(Math.round(windowNs));
}

interface ParsedHeaders {
  hotkey?: string;
  nonce?: bigint;
  uuid?: string;
  signature?: string;
  version?: number;
  timeoutSeconds: number;
  bodyHash: string;
}

/** Undefined when a present header cannot be read (the axon's SynapseParsingError, 400). */
function parseHeaders(headers: IncomingHttpHeaders): ParsedHeaders | undefined {
  const header = (name: string): string | undefined => {
    const value = headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const nonce = header('bt_header_dendrite_nonce');
  const version = header('bt_header_dendrite_version');
  const timeout = header('timeout');
  if (nonce !== undefined && !/^\d{1,30}$/.test(nonce)) return undefined;
  if (version !== undefined && !/^\d{1,12}$/.test(version)) return undefined;
  const timeoutSeconds = timeout === undefined ? 0 : floatOfHeader(timeout);
  if (timeoutSeconds === undefined) return undefined;
  return {
    hotkey: header('bt_header_dendrite_hotkey'),
    nonce: nonce === undefined ? undefined : BigInt(nonce),
    uuid: header('bt_header_dendrite_uuid'),
    signature: header('bt_header_dendrite_signature'),
    version: version === undefined ? undefined : Number(version),
    // No header: the SDK builds the synapse with `timeout=None` (not the field's default of
    // 12), and its window counts `timeout or 0`.
    timeoutSeconds,
    bodyHash: header('computed_body_hash') ?? '',
  };
}

/**
 * A header as Python's `float()` reads it (the synapse's `timeout`): a decimal number, signed or
 * not, or `inf`, `infinity` and `nan` in any case; undefined for what it refuses (`soon`, `0x10`
 * and the empty text, which JavaScript's Number takes). Digit separators (`1_0`) are left out.
 */
function floatOfHeader(text: string): number | undefined {
  const value = text.trim();
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(value);
  if (special) {
    if (special[2].toLowerCase() === 'nan') return NaN;
    return special[1] === '-' ? -Infinity : Infinity;
  }
  return /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(value) ? Number(value) : undefined;
}

function refuse(status: RefusalStatus, message: string): AxonVerdict {
  return { ok: false, status, message };
}
