import { EventEmitter } from 'node:events';
import type { LoggerService } from '@nestjs/common';
import { installCrashLogging } from './crash-logging';

function setUp() {
  const events = new EventEmitter();
  const lines: unknown[][] = [];
  const logger = { fatal: (...args: unknown[]) => lines.push(args) } as unknown as LoggerService;
  const exits: number[] = [];
  installCrashLogging(logger, { events, exit: (code) => exits.push(code) });
  return { events, lines, exits };
}

describe('installCrashLogging', () => {
  it('logs an uncaught exception as a fatal line with its error, then exits with 1', () => {
    const { events, lines, exits } = setUp();
    const error = new Error('socket gone');
    events.emit('uncaughtException', error);
    expect(lines).toEqual([[{ err: error }, 'uncaught exception: exiting', 'Crash']]);
    expect(exits).toEqual([1]);
  });

  it('logs an unhandled rejection the same way, whatever was rejected', () => {
    const { events, lines, exits } = setUp();
    events.emit('unhandledRejection', 'a string', Promise.resolve());
    expect(lines).toEqual([[{ err: 'a string' }, 'unhandled promise rejection: exiting', 'Crash']]);
    expect(exits).toEqual([1]);
  });

  it('exits with 1 even when the logger throws', () => {
    const events = new EventEmitter();
    const exits: number[] = [];
    const logger = {
      fatal: () => {
        throw new Error('stream closed');
      },
    } as unknown as LoggerService;
    installCrashLogging(logger, { events, exit: (code) => exits.push(code) });
    expect(() => events.emit('uncaughtException', new Error('x'))).toThrow('stream closed');
    expect(exits).toEqual([1]);
  });

  // process.exit ends the process at once: a line logged after it is never written.
  it('logs the crash before it exits', () => {
    const events = new EventEmitter();
    const lines: unknown[][] = [];
    const logger = { fatal: (...args: unknown[]) => lines.push(args) } as unknown as LoggerService;
    const loggedAtExit: number[] = [];
    installCrashLogging(logger, { events, exit: () => loggedAtExit.push(lines.length) });
    events.emit('uncaughtException', new Error('socket gone'));
    expect(loggedAtExit).toEqual([1]);
  });

  it("listens on the process's own events by default", () => {
    const before = {
      exception: process.listeners('uncaughtException'),
      rejection: process.listeners('unhandledRejection'),
    };
    installCrashLogging({ fatal: () => undefined } as unknown as LoggerService);
    const added = {
      exception: process
        .listeners('uncaughtException')
        .filter((l) => !before.exception.includes(l)),
      rejection: process
        .listeners('unhandledRejection')
        .filter((l) => !before.rejection.includes(l)),
    };
    // Removed at once: never called here, where it would end the test run.
    added.exception.forEach((listener) => process.off('uncaughtException', listener));
    added.rejection.forEach((listener) => process.off('unhandledRejection', listener));
    expect([added.exception.length, added.rejection.length]).toEqual([1, 1]);
  });
});
