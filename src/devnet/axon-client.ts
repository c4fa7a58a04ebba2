import { Sr25519Keypair } from '../network/bittensor/keypair';
import { buildSignedRequest, newTerminal, SignedRequest } from '../network/bittensor/dendrite';

/**
 * A bare signed call to one axon, for tests, benchmarks and people poking at the devnet: the
 * request the gateway's miner client would send, with a hook to tamper with it first. The
 * gateway itself calls miners through its MinerClient (budgets, address policy, breakers).
 */

export interface AxonCall {
  /** The axon's `http://host:port`. */
  url: string;
  /** The axon's hotkey, which the signature names. */
  hotkey: string;
  synapse: string;
  fields?: Record<string, unknown>;
  signer: Sr25519Keypair;
  timeoutSeconds?: number;
  /** Changes the signed request before it is sent (to test what the axon refuses). */
  tamper?: (request: SignedRequest) => SignedRequest;
  /** Gives up after this long (default: the timeout). */
  signal?: AbortSignal;
  /** The nonce's clock, in milliseconds (default: now). */
  nowMs?: number;
}

export interface AxonAnswer {
  status: number;
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
  text: string;
  /** The signed request as sent (after tampering). */
  request: SignedRequest;
}

export async function callAxon(call: AxonCall): Promise<AxonAnswer> {
  const { hostname, port } = new URL(call.url);
  const timeoutSeconds = call.timeoutSeconds ?? 12;
  const signed = buildSignedRequest(
    call.synapse,
    call.fields ?? {},
    timeoutSeconds,
    { ip: hostname.replace(/^\[|\]$/g, ''), port: Number(port || 80), hotkey: call.hotkey },
    newTerminal(call.signer.address, call.nowMs ?? Date.now()),
    (message) => call.signer.sign(message),
  );
  const request = call.tamper ? call.tamper(signed) : signed;
  return sendSigned(request, call.signal ?? AbortSignal.timeout(timeoutSeconds * 1000));
}

/** Sends an already signed request again (a replay, in tests). */
export async function sendSigned(
  request: SignedRequest,
  signal?: AbortSignal,
): Promise<AxonAnswer> {
  const response = await fetch(request.url, {
    method: 'POST',
    // A connection per call. A kept-alive one can be closed by the axon (5 s idle, as uvicorn)
    // just as the next call goes out on it: after an answer of tens of MB, parsing it can take
    // that long on a loaded machine, and the call then failed with ECONNRESET.
    headers: { ...request.headers, connection: 'close' },
    body: request.body,
    signal,
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the raw text is the body (the malformed fault sends such).
  }
  return { status: response.status, body, text, request };
}
