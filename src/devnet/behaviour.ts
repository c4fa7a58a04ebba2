import { MAX_TIMER_MS } from '../common/clock/durations';
import { SYNAPSE_NAMES, SynapseName } from '../common/synapse-names';

/**
 * How a simulated miner misbehaves. An empty object is an honest, instant miner that enforces
 * subnet 13's per-validator call limits. Latency is a property of the link and applies to every
 * call; the policies (`noOnDemand`, `strictBudget`, `blacklistAll`) to every call they name; the
 * other faults apply to a call with probability `faultRate`, and only on `endpoints`. The
 * bucket synapses (GetDataEntityBucket, GetContentsByBuckets) bend their stored records alike.
 */
export interface LatencyRange {
  min: number;
  max: number;
}

export interface MinerBehaviour {
  /**
   * Milliseconds before answering: fixed, or uniform in [min, max] (seeded); MAX_TIMER_MS at most.
   */
  latencyMs?: number | LatencyRange;
  /** Accept the request and never answer (until the devnet stops). */
  hang?: boolean;
  /** 500 with a JSON error body. */
  http500?: boolean;
  /** 200 with a body that is not JSON. */
  malformedJson?: boolean;
  /** 200 with a valid-looking JSON body streamed beyond 17 MB. */
  oversize?: boolean;
  /** Items, entities or stored records with missing or wrong-typed required fields. */
  wrongSchema?: boolean;
  /**
   * Items that do not match the query (dates, keywords, authors) with made-up uris; in a
   * bucket, made-up records (uris nobody holds) dated outside its hour beside the real ones.
   */
  fabricate?: boolean;
  /** Only about half of the matching items, or of a bucket's records: far less than indexed. */
  partial?: boolean;
  /** A bucket's records dated hours before the bucket's hour (real uris). */
  wrongHour?: boolean;
  /** A bucket's records under another label: hashtag or subreddit changed (real uris). */
  wrongLabel?: boolean;
  /**
   * Records whose text (X `text`, Reddit `body`) holds U+0000 and unpaired UTF-16 surrogates, as
   * broken scrapers store them; otherwise honest.
   */
  brokenText?: boolean;
  /** Factor applied to the index's sizes_bytes; entities keep honest sizes. */
  overclaimSizes?: number;
  /** Probability (0..1) that the faults apply to a given call; default 1. */
  faultRate?: number;
  /** Calls the faults apply to; default all four. */
  endpoints?: SynapseName[];
  /** 404 on OnDemandRequest, as public subnet 13 miners answer since December 2025. */
  noOnDemand?: boolean;
  /**
   * Enforce subnet 13's limits per validator hotkey: 2 GetMinerIndex, 2 GetDataEntityBucket and
   * 10 GetContentsByBuckets per window (from the miner's start; the first call an hour or more
   * after a window's start starts the next), refused calls counted, 403 beyond. Default true.
   */
  strictBudget?: boolean;
  /** 403 to every caller. */
  blacklistAll?: boolean;
}

export class InvalidBehaviourError extends Error {
  override readonly name = 'InvalidBehaviourError';
}

/**
 * Said when a latency is beyond MAX_TIMER_MS: Node would fire its timer after 1 ms, and the
 * miner meant to be slow would answer at once.
 */
const LATENCY_BOUND = `${MAX_TIMER_MS} ms (about 24.8 days, the longest timer Node keeps; for a miner that never answers, use hang)`;

export function validateBehaviour(behaviour: MinerBehaviour): MinerBehaviour {
  const { latencyMs, faultRate, overclaimSizes, endpoints } = behaviour;
  if (typeof latencyMs === 'number' && !(latencyMs >= 0 && latencyMs <= MAX_TIMER_MS)) {
    throw new InvalidBehaviourError(
      `latency must be between 0 and ${LATENCY_BOUND}, got ${latencyMs}`,
    );
  }
  if (typeof latencyMs === 'object') {
    const { min, max } = latencyMs;
    if (!(min >= 0 && max >= min)) {
      throw new InvalidBehaviourError(
        `latency range must satisfy 0 <= min <= max, got ${min}-${max}`,
      );
    }
    if (!(max <= MAX_TIMER_MS)) {
      throw new InvalidBehaviourError(
        `latency range must end at most at ${LATENCY_BOUND}, got ${min}-${max}`,
      );
    }
  }
  if (faultRate !== undefined && !(faultRate >= 0 && faultRate <= 1)) {
    throw new InvalidBehaviourError(`fault rate must be between 0 and 1, got ${faultRate}`);
  }
  if (overclaimSizes !== undefined && !(overclaimSizes > 0 && Number.isFinite(overclaimSizes))) {
    throw new InvalidBehaviourError(`overclaim factor must be positive, got ${overclaimSizes}`);
  }
  for (const endpoint of endpoints ?? []) {
    if (!SYNAPSE_NAMES.includes(endpoint)) {
      throw new InvalidBehaviourError(`unknown endpoint ${endpoint}`);
    }
  }
  return behaviour;
}

const FLAG_KEYS = [
  'hang',
  'http500',
  'malformedJson',
  'oversize',
  'wrongSchema',
  'fabricate',
  'partial',
  'wrongHour',
  'wrongLabel',
  'brokenText',
] as const;

type FlagKey = (typeof FLAG_KEYS)[number];

/** Whether any fault other than latency is configured. */
export function hasFaults(behaviour: MinerBehaviour): boolean {
  return FLAG_KEYS.some((key) => behaviour[key] === true) || behaviour.overclaimSizes !== undefined;
}

// Fault names as written on the command line, compared without case, dashes or underscores.
const FLAGS: Readonly<Record<string, FlagKey>> = {
  hang: 'hang',
  '500': 'http500',
  http500: 'http500',
  malformed: 'malformedJson',
  malformedjson: 'malformedJson',
  oversize: 'oversize',
  wrongschema: 'wrongSchema',
  schema: 'wrongSchema',
  fabricate: 'fabricate',
  partial: 'partial',
  wronghour: 'wrongHour',
  wronglabel: 'wrongLabel',
  brokentext: 'brokenText',
};

const ENDPOINT_ALIASES: Readonly<Record<string, SynapseName>> = {
  ondemandrequest: 'OnDemandRequest',
  ondemand: 'OnDemandRequest',
  getminerindex: 'GetMinerIndex',
  index: 'GetMinerIndex',
  getdataentitybucket: 'GetDataEntityBucket',
  bucket: 'GetDataEntityBucket',
  getcontentsbybuckets: 'GetContentsByBuckets',
  contents: 'GetContentsByBuckets',
};

function parseNumber(text: string, what: string): number {
  const value = Number(text);
  if (text.trim() === '' || Number.isNaN(value)) {
    throw new InvalidBehaviourError(`${what} must be a number, got "${text}"`);
  }
  return value;
}

/** Policies as written on the command line (compared like the faults). */
const POLICIES: Readonly<Record<string, MinerBehaviour>> = {
  noondemand: { noOnDemand: true },
  strictbudget: { strictBudget: true },
  nostrictbudget: { strictBudget: false },
  blacklistall: { blacklistAll: true },
};

/**
 * One fault: `hang`, `500`, `malformed`, `oversize`, `wrongSchema`, `fabricate`, `partial`,
 * `wrongHour`, `wrongLabel`, `brokenText`, `latency=200` or `latency=200-400`, `overclaim=3`,
 * `rate=0.3`,
 * `endpoints=ondemand+index+bucket+contents`,
 * the policies `no-ondemand`, `strict-budget` (the default), `no-strict-budget` and
 * `blacklist-all`, or `honest` (no fault).
 */
export function parseFault(text: string): MinerBehaviour {
  const [rawName, value] = text.split('=', 2).map((part) => part.trim());
  const name = rawName.toLowerCase().replace(/[-_]/g, '');
  if (name === 'honest' || name === 'none') return {};
  if (POLICIES[name] && value === undefined) return { ...POLICIES[name] };
  const flag = FLAGS[name];
  if (flag && value === undefined) {
    const behaviour: MinerBehaviour = {};
    behaviour[flag] = true;
    return behaviour;
  }
  switch (name) {
    case 'latency':
    case 'latencyms': {
      const [min, max] = (value ?? '').split('-');
      if (max === undefined) return { latencyMs: parseNumber(min, 'latency') };
      return { latencyMs: { min: parseNumber(min, 'latency'), max: parseNumber(max, 'latency') } };
    }
    case 'overclaim':
    case 'overclaimsizes':
      return { overclaimSizes: value === undefined ? 3 : parseNumber(value, 'overclaim factor') };
    case 'rate':
    case 'faultrate':
      return { faultRate: parseNumber(value ?? '', 'fault rate') };
    case 'endpoints':
      return { endpoints: (value ?? '').split('+').map(parseEndpoint) };
  }
  throw new InvalidBehaviourError(`unknown fault "${text}"`);
}

function parseEndpoint(text: string): SynapseName {
  const endpoint = ENDPOINT_ALIASES[text.trim().toLowerCase()];
  if (!endpoint) throw new InvalidBehaviourError(`unknown endpoint "${text}"`);
  return endpoint;
}

/**
 * `"2:hang,3:fabricate,4:latency=200-400,4:rate=0.5"` → behaviour per miner uid. Several entries
 * for one uid combine.
 */
export function parseFaultSpec(spec: string): Map<number, MinerBehaviour> {
  const behaviours = new Map<number, MinerBehaviour>();
  for (const entry of spec.split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    const colon = entry.indexOf(':');
    const uidText = colon < 0 ? '' : entry.slice(0, colon).trim();
    if (!/^\d+$/.test(uidText)) {
      throw new InvalidBehaviourError(`fault "${entry}" must look like <uid>:<fault>`);
    }
    const uid = Number(uidText);
    const merged = { ...behaviours.get(uid), ...parseFault(entry.slice(colon + 1)) };
    behaviours.set(uid, validateBehaviour(merged));
  }
  return behaviours;
}

/** A short human description, e.g. `honest` or `fabricate latency=200-400 rate=0.5`. */
export function describeBehaviour(behaviour: MinerBehaviour): string {
  const parts: string[] = FLAG_KEYS.filter((key) => behaviour[key] === true);
  const { latencyMs, overclaimSizes, faultRate, endpoints } = behaviour;
  if (behaviour.noOnDemand) parts.push('no-ondemand');
  if (behaviour.strictBudget === false) parts.push('no-strict-budget');
  if (behaviour.blacklistAll) parts.push('blacklist-all');
  if (typeof latencyMs === 'number') parts.push(`latency=${latencyMs}`);
  if (typeof latencyMs === 'object') parts.push(`latency=${latencyMs.min}-${latencyMs.max}`);
  if (overclaimSizes !== undefined) parts.push(`overclaim=${overclaimSizes}`);
  if (faultRate !== undefined) parts.push(`rate=${faultRate}`);
  if (endpoints) parts.push(`endpoints=${endpoints.join('+')}`);
  return parts.length === 0 ? 'honest' : parts.join(' ');
}
