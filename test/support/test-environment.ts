import { TestEnvironment as NodeEnvironment } from 'jest-environment-node';
import { closeFetchConnections } from './fetch-connections';
import { handlesLeftAfter, openHandles } from './open-handles';
import { exitAtOnceWhenDone } from './worker-exit';

/**
 * How long a spec file's timers, servers, connections and child processes may stay open after it
 * ends: above the 1.75 s for which @polkadot/api keeps a subscription after its connection closes
 * (rpc-core's refCountDelay) with room for a loaded machine's late timers, so the chain specs
 * pass (2.5 s left 0.75 s: a flakiness audit), and short enough that a forgotten one fails its
 * file. (A closed server or app is gone within 300 ms, also on a loaded machine.)
 */
const HANDLES_END_WITHIN_MS = 4_000;

/** What this environment reads of jest-circus's events (`Circus.Event` of @jest/types). */
interface TestEvent {
  name: string;
  test?: { errors: unknown[] };
}

/**
 * Jest's node environment, and three things more when a spec file is done (teardown runs after
 * every hook of the file). A worker still alive when jest's wait for it to end runs out
 * (`workerGracefulExitTimeout` in jest.config.js) is killed, with "A worker process has failed
 * to exit gracefully" (seen on CI, every test passing). Three things held workers so:
 * - the connections Node's fetch keeps alive: undici holds one for the server's keep-alive time,
 *   and does not unref it. They are closed; the next file gets a new pool.
 * - timers the file left running (a 5 s sleep raced against a 50 ms bound; the chain client's
 *   delayed unsubscription after its connection closed). Teardown waits for them, and for the
 *   servers, connections and child processes the file opened, to end, and fails the file, naming
 *   it and what is left, when they outlast HANDLES_END_WITHIN_MS: found where it is made rather
 *   than as a warning at the end of some later run.
 * - Node freeing the worker's heap as it ends (worker-exit.ts).
 */
export default class TestEnvironment extends NodeEnvironment {
  private readonly testPath: string;
  private handlesBefore = new Map<string, number>();
  /** A test or hook of the file failed: its own failure is then the one to report. */
  private failed = false;

  constructor(...[config, context]: ConstructorParameters<typeof NodeEnvironment>) {
    super(config, context);
    this.testPath = context.testPath;
  }

  override async setup(): Promise<void> {
    this.handlesBefore = openHandles();
    await super.setup();
  }

  // Jest drops every test result of a file whose environment's teardown throws ("Test suite
  // failed to run", "Tests: 0 total"), and a failing test that skipped its cleanup is the usual
  // way a file leaves something open: its assertion was then reported nowhere (a test hygiene
  // audit). A file that already failed says what it left on stderr instead.
  handleTestEvent(event: TestEvent): void {
    if (
      (event.name === 'test_done' && (event.test?.errors.length ?? 0) > 0) ||
      event.name === 'hook_failure'
    )
      this.failed = true;
  }

  override async teardown(): Promise<void> {
    // This class runs in the worker's own realm: its globalThis is the one Node's fetch reads.
    await closeFetchConnections(globalThis);
    await super.teardown();
    exitAtOnceWhenDone();
    const left = await handlesLeftAfter(this.handlesBefore, HANDLES_END_WITHIN_MS);
    if (left.length === 0) return;
    const message =
      `${this.testPath} left ${left.join(', ')} open ${HANDLES_END_WITHIN_MS} ms after its ` +
      'end; each keeps the jest worker alive (clear or close it in an afterAll, or unref it)';
    if (this.failed) process.stderr.write(`\n${message}\n`);
    else throw new Error(message);
  }
}
