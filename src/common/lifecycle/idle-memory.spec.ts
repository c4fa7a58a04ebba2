import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { LoggerService } from '@nestjs/common';
import {
  exposedGc,
  IdleMemorySources,
  IdleMemorySettings,
  IdleMemoryTrim,
  startIdleMemoryTrim,
  systemSources,
} from './idle-memory';

const MB = 1_048_576;
const SETTINGS: IdleMemorySettings = {
  intervalMs: 15_000,
  idleRequestsPerMinute: 16,
  idleUtilization: 0.02,
  growthBytes: 16 * MB,
};

/**
 * A process whose requests, utilisation and RSS the test sets; a collection brings RSS to
 * `freedTo`.
 */
function fakeProcess(
  start: { utilization: number; rss: number; freedTo: number },
  settings = SETTINGS,
) {
  const state = { ...start, requests: 0, collections: 0 };
  const sources: IdleMemorySources = {
    requests: () => state.requests,
    utilization: () => state.utilization,
    rss: () => state.rss,
    collect: () => {
      state.collections += 1;
      state.rss = state.freedTo;
    },
  };
  return { state, trim: new IdleMemoryTrim(sources, settings) };
}

describe(IdleMemoryTrim.name, () => {
  it('collects at the first idle interval after start-up, and says what it freed', () => {
    const { state, trim } = fakeProcess({ utilization: 0.001, rss: 216 * MB, freedTo: 135 * MB });
    expect(trim.check()).toEqual({
      rssBefore: 216 * MB,
      rssAfter: 135 * MB,
      pauseMs: expect.any(Number) as number,
    });
    expect(state.collections).toBe(1);
  });

  it('leaves a busy process alone, however large', () => {
    const { state, trim } = fakeProcess({ utilization: 0.02, rss: 500 * MB, freedTo: 135 * MB });
    expect(trim.check()).toBeUndefined();
    expect(state.collections).toBe(0);
  });

  it('leaves alone a process that served more than probes in the interval, however quiet', () => {
    const { state, trim } = fakeProcess({ utilization: 0, rss: 500 * MB, freedTo: 135 * MB });
    state.requests = 5;
    expect(trim.check()).toBeUndefined();
    expect(state.collections).toBe(0);
    // The next interval, with a probe's four, is idle.
    state.requests += 4;
    expect(trim.check()?.rssAfter).toBe(135 * MB);
  });

  it('counts probes by their rate, whatever the interval', () => {
    const minute = fakeProcess(
      { utilization: 0, rss: 500 * MB, freedTo: 135 * MB },
      { ...SETTINGS, intervalMs: 60_000 },
    );
    minute.state.requests = 17;
    expect(minute.trim.check()).toBeUndefined();
    minute.state.requests += 16;
    expect(minute.trim.check()?.rssAfter).toBe(135 * MB);

    // A second's interval: one request is more than probes at 16 a minute.
    const second = fakeProcess(
      { utilization: 0, rss: 500 * MB, freedTo: 135 * MB },
      { ...SETTINGS, intervalMs: 1000 },
    );
    second.state.requests = 1;
    expect(second.trim.check()).toBeUndefined();
    expect(second.trim.check()?.rssAfter).toBe(135 * MB);
  });

  it('collects again only once RSS has grown past what the last collection left', () => {
    const { state, trim } = fakeProcess({ utilization: 0, rss: 216 * MB, freedTo: 135 * MB });
    trim.check();
    state.rss = 135 * MB + 16 * MB - 1;
    expect(trim.check()).toBeUndefined();
    state.rss = 135 * MB + 16 * MB;
    expect(trim.check()?.rssAfter).toBe(135 * MB);
    expect(state.collections).toBe(2);
  });

  it('does not chase memory a collection cannot free', () => {
    // Live data: the collection frees nothing, so the next idle intervals do not repeat it.
    const { state, trim } = fakeProcess({ utilization: 0, rss: 300 * MB, freedTo: 300 * MB });
    trim.check();
    trim.check();
    trim.check();
    expect(state.collections).toBe(1);
  });

  it('checks on its interval without keeping the process up, and logs each collection', () => {
    jest.useFakeTimers();
    try {
      const { state, trim } = fakeProcess({ utilization: 0, rss: 216 * MB, freedTo: 135 * MB });
      const log = jest.fn();
      trim.start({ log } as unknown as LoggerService);
      jest.advanceTimersByTime(14_999);
      expect(state.collections).toBe(0);
      jest.advanceTimersByTime(1);
      expect(state.collections).toBe(1);
      expect(log).toHaveBeenCalledWith(
        expect.stringMatching(/^idle: collected garbage, RSS 216 → 135 MB \(\d+ ms\)$/),
        'IdleMemory',
      );
      trim.stop();
      state.rss = 400 * MB;
      jest.advanceTimersByTime(60_000);
      expect(state.collections).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe(startIdleMemoryTrim.name, () => {
  it("starts on the interval given, counting the server's requests", () => {
    const server = createServer();
    const timers = process.getActiveResourcesInfo().filter((r) => r === 'Timeout');
    const trim = startIdleMemoryTrim(server, { log: jest.fn() } as unknown as LoggerService, 5000);
    try {
      expect(trim).toBeInstanceOf(IdleMemoryTrim);
      expect(server.listenerCount('request')).toBe(1);
      // Its timer does not keep the process up.
      expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout')).toEqual(timers);
    } finally {
      trim?.stop();
    }
  });

  // The gateway's own settings: health probes and a scrape (4 requests in 15 s) still leave the
  // process idle, and a collection is worth its pause once RSS has grown by 16 MB.
  it('collects in a process that only answers probes, again once RSS grew by 16 MB', () => {
    jest.useFakeTimers();
    const gc = jest.fn();
    (globalThis as { gc?: unknown }).gc = gc;
    let rss = 300 * MB;
    jest.spyOn(process.memoryUsage, 'rss').mockImplementation(() => rss);
    jest
      .spyOn(performance, 'eventLoopUtilization')
      .mockReturnValue({ idle: 1, active: 0, utilization: 0 });
    const server = createServer();
    const trim = startIdleMemoryTrim(
      server,
      { log: jest.fn() } as unknown as LoggerService,
      15_000,
    );
    try {
      for (let probe = 0; probe < 4; probe++) server.emit('request');
      jest.advanceTimersByTime(15_000);
      expect(gc).toHaveBeenCalledTimes(1);
      rss += 15 * MB;
      jest.advanceTimersByTime(15_000);
      expect(gc).toHaveBeenCalledTimes(1);
      rss += 2 * MB;
      jest.advanceTimersByTime(15_000);
      expect(gc).toHaveBeenCalledTimes(2);
    } finally {
      trim?.stop();
      delete (globalThis as { gc?: unknown }).gc;
      jest.restoreAllMocks();
      jest.useRealTimers();
    }
  });

  it('does nothing when turned off (IDLE_MEMORY_CHECK_SECONDS=0)', () => {
    const server = createServer();
    expect(startIdleMemoryTrim(server, {} as LoggerService, 0)).toBeUndefined();
    expect(server.listenerCount('request')).toBe(0);
  });
});

describe('the process itself', () => {
  it("takes V8's gc without --expose-gc, and gives it to no other context", () => {
    expect(exposedGc()).toEqual(expect.any(Function));
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { runInNewContext } = require('node:vm') as typeof import('node:vm');
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });

  it('frees garbage the heap still holds', () => {
    expect(leaveGarbage(500_000)).toBe(500_000);
    const before = process.memoryUsage().heapUsed;
    systemSources(createServer()).collect();
    expect(before - process.memoryUsage().heapUsed).toBeGreaterThan(20 * MB);
  });

  // From V8 12 (Node 22, 24: the image's) a bare gc() leaves most garbage in place.
  it('collects with the last-resort flavour where V8 needs it to give pages back', () => {
    const gc = jest.fn();
    (globalThis as { gc?: unknown }).gc = gc;
    try {
      systemSources(createServer()).collect();
    } finally {
      delete (globalThis as { gc?: unknown }).gc;
    }
    const thorough = { type: 'major', execution: 'sync', flavor: 'last-resort' };
    const v8 = Number(process.versions.v8.split('.')[0]);
    expect(gc.mock.calls).toEqual([[v8 >= 12 ? thorough : undefined]]);
  });

  it("counts the server's requests", () => {
    const server = createServer();
    const sources = systemSources(server);
    server.emit('request');
    server.emit('request');
    expect(sources.requests()).toBe(2);
  });

  it('reads an event-loop utilisation between 0 and 1', () => {
    const sources = systemSources(createServer());
    const busyUntil = Date.now() + 50;
    while (Date.now() < busyUntil);
    const utilization = sources.utilization();
    expect(utilization).toBeGreaterThan(0);
    expect(utilization).toBeLessThanOrEqual(1);
  });
});

/** Allocates `count` small objects and drops them: garbage the heap holds until a collection. */
function leaveGarbage(count: number): number {
  const items = Array.from({ length: count }, (_, index) => ({ index, text: `item ${index}` }));
  return items.length;
}
