import { installLoopbackGuard } from './loopback-guard';

/**
 * Set up around every spec of every tier (jest.config.js): the loopback guard
 * (./loopback-guard.ts) refuses every connection that would leave the machine, and the spec
 * then fails, naming it, even where the code under test took the failure in its stride (a
 * miner call counted as failed, say). Node's modules are shared by the specs a worker runs, so
 * the guard is installed once per worker; each spec file checks only the refusals made while
 * it ran. A process a test starts through ./app-process.ts runs the guard too
 * (./loopback-preload.js), and its refusals are added here.
 */
/** Every connection refused in this worker so far, oldest first (a spec may take its own). */
export const refusedConnections = installLoopbackGuard();

let before = 0;
beforeAll(() => {
  before = refusedConnections.length;
});
afterAll(() => {
  expect({ refusedConnections: refusedConnections.slice(before) }).toEqual({
    refusedConnections: [],
  });
});
