import { TestEnvironment as NodeEnvironment } from 'jest-environment-node';
import { closeFetchConnections } from './fetch-connections';

/**
 * Jest's node environment, and one thing more when a spec file is done: the connections Node's
 * fetch keeps alive are closed. Such a connection keeps the worker's process alive for seconds
 * after its last request (undici holds it for the server's keep-alive time, and does not unref
 * it), and a worker still alive half a second after its last spec file is killed by jest with
 * "A worker process has failed to exit gracefully" (seen on CI, every test passing). Teardown
 * runs after every hook of the file; the next file gets a new pool.
 */
export default class TestEnvironment extends NodeEnvironment {
  override async teardown(): Promise<void> {
    // This class runs in the worker's own realm: its globalThis is the one Node's fetch reads.
    await closeFetchConnections(globalThis);
    await super.teardown();
  }
}
