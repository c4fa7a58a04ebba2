import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { whenResponseDone } from './response-done';

const fakeResponse = () => new EventEmitter() as unknown as ServerResponse & EventEmitter;

describe(whenResponseDone.name, () => {
  it('calls every listener once, on finish, even when close follows', () => {
    const response = fakeResponse();
    const calls: string[] = [];
    whenResponseDone(response, () => calls.push('log'));
    whenResponseDone(response, () => calls.push('metrics'));
    response.emit('finish');
    response.emit('close');
    expect(calls).toEqual(['log', 'metrics']);
  });

  it('calls them on close when the response never finished (the client went away)', () => {
    const response = fakeResponse();
    const calls: string[] = [];
    whenResponseDone(response, () => calls.push('log'));
    response.emit('close');
    response.emit('finish');
    expect(calls).toEqual(['log']);
  });

  it('adds one pair of listeners per response, however many callers', () => {
    const response = fakeResponse();
    for (let i = 0; i < 3; i++) whenResponseDone(response, () => undefined);
    expect(response.listenerCount('finish')).toBe(1);
    expect(response.listenerCount('close')).toBe(1);
  });
});
