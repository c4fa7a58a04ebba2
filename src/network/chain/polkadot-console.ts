import { format } from 'node:util';
import { Logger } from '@nestjs/common';
import { urlsAsAddresses } from '../../common/security/node-address';

/**
 * @polkadot/util's logger, which every part of the chain client logs through, writes to the
 * console: `console[error|warn|log](formatDate(now), type, ...values)`, `type` being the
 * origin upper-cased with a colon, padded to 16 (`        RPC-CORE:`). Its lines name the node
 * by the URL as given, token included (`disconnected from wss://user:token@…`), and were plain
 * text among our JSON lines.
 */
const POLKADOT_DATE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const POLKADOT_TYPE = /^ *([A-Z0-9][A-Z0-9/_-]*):$/;
const POLKADOT_TYPE_WIDTH = 16;
const METHODS = ['error', 'warn', 'log'] as const;

/** The wrappers installed, so that installing again (every connection does) is a no-op. */
const WRAPPERS = new WeakSet<object>();
/** Every node URL connected to: replaced whole in the lines (see urlsAsAddresses). */
const NODE_URLS = new Set<string>();
/** Nest's Logger, so the app's (pino) once the app is set up. */
const logger = new Logger('Polkadot');

/**
 * Routes the chain client's console lines to our logger (Nest's, so pino's JSON in the app),
 * each URL in them cut to its scheme and host. Only calls shaped as that logger makes them are
 * taken: anything else written to the console goes on as before. Called on every connection
 * with its URL, so that a console method replaced since (a test's spy) is wrapped again.
 */
export function routePolkadotConsole(nodeUrl: string): void {
  NODE_URLS.add(nodeUrl);
  for (const method of METHODS) {
    const original = console[method];
    if (WRAPPERS.has(original)) continue;
    const wrapper = function (this: Console, ...values: unknown[]): void {
      const origin = polkadotOrigin(values);
      if (origin === undefined) return original.apply(this, values);
      logger[method](`${origin}: ${urlsAsAddresses(format(...values.slice(2)), NODE_URLS)}`);
    };
    WRAPPERS.add(wrapper);
    console[method] = wrapper;
  }
}

/** The logger's origin (`RPC-CORE`) when the call is shaped as @polkadot/util's logger makes it. */
function polkadotOrigin([date, type]: unknown[]): string | undefined {
  if (typeof date !== 'string' || typeof type !== 'string') return undefined;
  if (!POLKADOT_DATE.test(date) || type.length < POLKADOT_TYPE_WIDTH) return undefined;
  return POLKADOT_TYPE.exec(type)?.[1];
}
