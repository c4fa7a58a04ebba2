import type { Request, Response } from 'express';
import { repairPathEncoding } from './percent-encoding';

/** The URL Express routes after the repair, and whether the request went on. */
function repaired(url: string): string {
  const request = { url } as Request;
  let passedOn = false;
  repairPathEncoding(request, {} as Response, () => {
    passedOn = true;
  });
  expect(passedOn).toBe(true);
  return request.url;
}

/** U+FFFD as a path carries it: FastAPI decodes invalid bytes to it. */
const REPLACEMENT = encodeURIComponent('\ufffd');

describe(repairPathEncoding.name, () => {
  it('leaves a well-encoded path alone, multi-byte characters included', () => {
    expect(repaired('/api/v1/tasks/caf%C3%A9')).toBe('/api/v1/tasks/caf%C3%A9');
    expect(repaired('/api/v1/tasks/%E2%82%AC%20x')).toBe('/api/v1/tasks/%E2%82%AC%20x');
  });

  it('encodes a % that starts no escape, as FastAPI reads it literally', () => {
    expect(repaired('/api/v1/tasks/%zz')).toBe('/api/v1/tasks/%25zz');
    expect(repaired('/api/v1/tasks/100%')).toBe('/api/v1/tasks/100%25');
  });

  it('turns only the invalid bytes of a run into U+FFFD, keeping the characters around them', () => {
    // é, then a three-byte sequence cut short: é survives, the broken bytes become one U+FFFD.
    expect(repaired('/api/v1/tasks/%C3%A9%E0%A4')).toBe(`/api/v1/tasks/%C3%A9${REPLACEMENT}`);
    // An encoded lone surrogate is invalid UTF-8 too.
    expect(repaired('/api/v1/tasks/a%ED%A0%80b')).toBe(`/api/v1/tasks/a${REPLACEMENT.repeat(3)}b`);
  });

  it('keeps the query string of a repaired path, and leaves it unrepaired (its parser is lenient)', () => {
    expect(repaired('/api/v1/tasks/%E0?limit=5&q=%zz')).toBe(
      `/api/v1/tasks/${REPLACEMENT}?limit=5&q=%zz`,
    );
    expect(repaired('/api/v1/tasks/x?q=%zz')).toBe('/api/v1/tasks/x?q=%zz');
  });

  // An exception per run: a path of 4,000 runs of `%ff` cost tens of milliseconds before
  // authentication (found beside an audit's finding on the secret scanner).
  it('repairs runs that are not UTF-8 without decodeURIComponent throwing for each', () => {
    const decode = jest.spyOn(globalThis, 'decodeURIComponent');
    try {
      expect(repaired(`/api/v1/tasks/${'%ffA'.repeat(1_000)}`)).toBe(
        `/api/v1/tasks/${`${REPLACEMENT}A`.repeat(1_000)}`,
      );
      const thrown = decode.mock.results.filter((result) => result.type === 'throw');
      expect(thrown.length).toBe(0);
    } finally {
      decode.mockRestore();
    }
  });
});
