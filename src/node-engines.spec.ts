import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

// package.json's `engines.node` is the promise of which Node runs the project: `npm install`,
// `npm start`, `npm test` and the image. It drifted once (">=20.12" while undici asked for
// 20.18.1 and jest refuses Node 21), and npm only warns, so these tests hold it to every
// package the lock file installs.

const ROOT = join(__dirname, '..');

interface LockedPackage {
  engines?: { node?: string };
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as T;
}

const ours = readJson<{ engines: { node: string } }>('package.json').engines.node;
const locked = readJson<{ packages: Record<string, LockedPackage> }>('package-lock.json').packages;

describe("package.json's engines.node", () => {
  it('is a valid range', () => {
    expect(semver.validRange(ours)).not.toBeNull();
  });

  it('admits no Node version that an installed package refuses', () => {
    const refusing = Object.entries(locked)
      .filter(([path]) => path !== '')
      .flatMap(([path, entry]) => {
        const theirs = entry.engines?.node;
        if (theirs === undefined || semver.validRange(theirs) === null) return [];
        return semver.subset(ours, theirs) ? [] : [`${path}: ${theirs}`];
      });
    expect(refusing).toEqual([]);
  });

  it('admits the Node version of the Dockerfile', () => {
    const images = [
      ...readFileSync(join(ROOT, 'Dockerfile'), 'utf8').matchAll(/^FROM node:(\d+)/gm),
    ];
    expect(images.length).toBeGreaterThan(0);
    for (const [, major] of images) expect(semver.intersects(ours, `${major}.x`)).toBe(true);
  });

  // npm test runs every tier on the Node test/image-node.json pins (test/image-runtime.js).
  it("pins, for npm test, a Node of the Dockerfile's major", () => {
    const pinned = JSON.parse(readFileSync(join(ROOT, 'test', 'image-node.json'), 'utf8')) as {
      version: string;
    };
    const [, major] = /^FROM node:(\d+)/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))!;
    expect(pinned.version.split('.')[0]).toBe(major);
  });

  it('is what the lock file records for the project', () => {
    expect(locked['']?.engines?.node).toBe(ours);
  });
});
