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
});
