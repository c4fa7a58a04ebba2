/** Where Node's fetch (its bundled undici) keeps its connection pool: undici's documented key. */
const FETCH_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

interface Dispatcher {
  destroy(): Promise<void>;
}

/**
 * Closes the connections that Node's fetch keeps alive in the realm whose global is `host` (the
 * worker's own: a spec's global is a sandbox, and Node's fetch reads the worker's). Node's fetch
 * reads its pool from there on every call, so a new pool of the same kind takes the old one's
 * place before the old one is destroyed: fetch keeps working. Destroyed, not closed: closing
 * waits for requests in flight, and one a spec left hanging would hang the run.
 */
export async function closeFetchConnections(host: object): Promise<void> {
  const realm = host as Record<symbol, Dispatcher | undefined>;
  const pool = realm[FETCH_DISPATCHER];
  if (!pool) return;
  realm[FETCH_DISPATCHER] = new (pool.constructor as new () => Dispatcher)();
  await pool.destroy();
}
