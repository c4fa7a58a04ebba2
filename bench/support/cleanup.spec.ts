import { cleanupOnExit } from './cleanup';

describe(cleanupOnExit.name, () => {
  afterEach(() => jest.restoreAllMocks());

  // The handlers are caught, not installed: a real signal would reach jest as well.
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ])('on %s, runs the undo steps and exits %i', async (signal, status) => {
    const handlers = new Map<string | symbol, () => void>();
    jest.spyOn(process, 'once').mockImplementation((event, listener) => {
      handlers.set(event, listener as () => void);
      return process;
    });
    const exited = new Promise<unknown>((resolve) => {
      jest.spyOn(process, 'exit').mockImplementation((code) => resolve(code) as never);
    });
    const undone: string[] = [];
    cleanupOnExit().push(async () => void undone.push('database'));
    handlers.get(signal)?.();
    expect(await exited).toBe(status);
    expect(undone).toEqual(['database']);
  });
});
