import ipaddr from 'ipaddr.js';
import { SYNAPSE_NAMES, SynapseName } from '../common/synapse-names';
import { HOUR_MS } from '../common/clock/durations';
import { readEveryEntry } from './list-setting';

/**
 * Parsers of the settings that bound what the gateway may do to miners: which addresses it may
 * connect to (MINER_ALLOWED_NETWORKS) and how many calls of each synapse a miner may receive
 * from it (MINER_CALL_BUDGETS over the defaults of VALIDATOR_SHARES_HOTKEY). Each throws an Error
 * whose message says what is wrong.
 */

export interface AllowedNetworks {
  /** Every public unicast address (not loopback, private, link-local, CGNAT, reserved, …). */
  publicUnicast: boolean;
  /** Further ranges, normalized (`10.0.0.0/8`, `::1/128`). */
  cidrs: string[];
}

/** `public`, `loopback`, and CIDRs, comma-separated; a bare address is a /32 or /128. */
export function parseAllowedNetworks(text: string): AllowedNetworks {
  const allowed: AllowedNetworks = { publicUnicast: false, cidrs: [] };
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new Error('must list at least one network');
  // Every bad entry is named at once: naming the first alone left the next for another start.
  const refused: string[] = [];
  for (const entry of entries) {
    if (entry.toLowerCase() === 'public') allowed.publicUnicast = true;
    else if (entry.toLowerCase() === 'loopback') allowed.cidrs.push('127.0.0.0/8', '::1/128');
    else {
      const cidr = normalizeCidr(entry);
      if (cidr === undefined) refused.push(`"${entry}"`);
      else allowed.cidrs.push(cidr);
    }
  }
  if (refused.length > 0) throw new Error(notNetworks(refused));
  return allowed;
}

/** `"a" is not a CIDR range (…)`, or `"a", "b" and "c" are not CIDR ranges (…)`. */
function notNetworks(quoted: string[]): string {
  const forms = '(e.g. 203.0.113.0/24), "public" or "loopback"';
  if (quoted.length === 1) return `${quoted[0]} is not a CIDR range ${forms}`;
  return `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)} are not CIDR ranges ${forms}`;
}

/**
 * The entry as a normalized range, or undefined when it is none. Strict: IPv4 in four decimal
 * parts only (`10/8` would otherwise read as `0.0.0.10/8`).
 */
function normalizeCidr(entry: string): string | undefined {
  const [text, bits, extra] = entry.split('/');
  const ipv6 = text.includes(':');
  const valid = ipv6 ? ipaddr.IPv6.isValid(text) : ipaddr.IPv4.isValidFourPartDecimal(text);
  const prefix = bits === undefined ? (ipv6 ? 128 : 32) : Number(bits);
  if (
    !valid ||
    extra !== undefined ||
    !/^\d{1,3}$/.test(String(bits ?? prefix)) ||
    prefix > (ipv6 ? 128 : 32)
  )
    return undefined;
  const address = ipv6 ? ipaddr.IPv6.parse(text) : ipaddr.IPv4.parse(text);
  return `${address.toString()}/${prefix}`;
}

export interface CallBudget {
  calls: number;
  windowMs: number;
}

export type CallBudgets = Partial<Record<SynapseName, CallBudget>>;

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: HOUR_MS };

/**
 * MINER_CALL_BUDGETS over `defaults`, entry by entry from the left: `<Synapse>=<calls>/<window>`
 * sets that synapse's budget (windows `h`, `2h`, `30m`, `90s`), `<Synapse>=none` removes it
 * (unlimited), and `none` alone removes every budget so far. Synapses not named keep their
 * default, so `GetContentsByBuckets=5/h` changes that one budget only; a synapse named twice
 * is refused.
 */
export function parseCallBudgets(text: string, defaults: CallBudgets = {}): CallBudgets {
  let budgets: CallBudgets = { ...defaults };
  const entries = text
    .split(',')
    .map((part) => part.trim())
    .filter((entry) => entry !== '');
  // A synapse named twice took the last entry without a word: `…=2/h, …=9/h`, pasted onto a
  // default line, gave 9 (a budget audit). Each is named once.
  const named = new Set<SynapseName>();
  const namedOnce = (name: string): SynapseName => {
    const synapse = synapseNamed(name);
    if (named.has(synapse)) throw new Error(`${synapse} is named twice: give each synapse once`);
    named.add(synapse);
    return synapse;
  };
  readEveryEntry(entries, (entry) => {
    if (entry.toLowerCase() === 'none') {
      budgets = {};
      return;
    }
    const [name, value] = entry.split('=', 2).map((part) => part.trim());
    if (value?.toLowerCase() === 'none') {
      delete budgets[namedOnce(name)];
      return;
    }
    const match = /^(\w+)\s*=\s*(\d+)\s*\/\s*(\d*)\s*([smh])$/.exec(entry);
    if (!match)
      throw new Error(
        `"${entry}" must look like <Synapse>=<calls>/h (or /30m, /90s), or <Synapse>=none`,
      );
    const [, , calls, count, unit] = match;
    const synapse = namedOnce(name);
    const windowMs = Number(count === '' ? 1 : count) * UNIT_MS[unit];
    if (windowMs === 0) throw new Error(`"${entry}": the window must be longer than 0`);
    budgets[synapse] = { calls: Number(calls), windowMs };
  });
  return budgets;
}

function synapseNamed(name: string): SynapseName {
  if (!SYNAPSE_NAMES.includes(name as SynapseName))
    throw new Error(`"${name}" is not a synapse (${SYNAPSE_NAMES.join(', ')})`);
  return name as SynapseName;
}

/** A budget as MINER_CALL_BUDGETS writes it: `1/h`, `3/2h`, `5/30m`, `10/90s`. */
export function describeBudget(budget: CallBudget): string {
  const { calls, windowMs } = budget;
  const [count, unit] =
    windowMs % HOUR_MS === 0
      ? [windowMs / HOUR_MS, 'h']
      : windowMs % 60_000 === 0
        ? [windowMs / 60_000, 'm']
        : [windowMs / 1000, 's'];
  return `${calls}/${count === 1 ? '' : count}${unit}`;
}
