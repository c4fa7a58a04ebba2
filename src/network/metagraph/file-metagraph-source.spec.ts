import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MetagraphFile, MetagraphNeuron } from '../protocol';
import { metagraphNeuron } from '../../../test/support/neurons';
import { firstLookAtMissing } from '../../../test/support/first-look';
import { until } from '../../../test/support/until';
import { FileMetagraphSource, parseMetagraph } from './file-metagraph-source';

function metagraph(
  neurons: unknown[] = [metagraphNeuron(0), metagraphNeuron(1)],
): Record<string, unknown> {
  return { netuid: 13, block: 4_242_001, updated_at: '2024-06-01T00:00:00.000Z', neurons };
}

/** Parsed for a gateway configured with NETUID 21, so that a default shows. */
const parse = (value: unknown) => parseMetagraph(value, 21);

/** Replaces the file the way writers do: a temporary file renamed over it. */
async function replaceAtomically(path: string, content: unknown): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, JSON.stringify(content));
  await rename(temporary, path);
}

describe(parseMetagraph.name, () => {
  it('reads a valid file as it is', () => {
    const file = metagraph([
      metagraphNeuron(0, { axon_url: null, validator_permit: true, stake: 9_000, incentive: 0 }),
      metagraphNeuron(1),
      metagraphNeuron(7, { axon_url: 'http://miner.example.org:8091' }),
      metagraphNeuron(8, { axon_url: 'http://[2001:db8::8]:80' }),
    ]);

    expect(parse(file)).toEqual(file);
  });

  it('accepts an empty neuron list', () => {
    expect(parse(metagraph([])).neurons).toEqual([]);
  });

  // Read as netuid 0, a file without one passed as another subnet's, unjudged by the
  // suspicious-read check (an audit's finding).
  it("defaults the header fields it can do without, the netuid to the gateway's", () => {
    const before = Date.now();

    const parsed = parse({ neurons: [metagraphNeuron(3)] });

    expect(parsed).toMatchObject({ netuid: 21, block: 0, neurons: [metagraphNeuron(3)] });
    expect(Date.parse(parsed.updated_at)).toBeGreaterThanOrEqual(before - 1);
  });

  it.each([null, [], 'neurons', 42, {}, { neurons: {} }, { neurons: 'none' }])(
    'rejects %p, which has no neurons list',
    (value) => {
      expect(() => parse(value)).toThrow('expected an object with a `neurons` array');
    },
  );

  it.each([null, 'uid 3', [metagraphNeuron(1)]])(
    'rejects a neuron that is %p, naming it',
    (value) => {
      expect(() => parse(metagraph([metagraphNeuron(0), value]))).toThrow(
        'neurons[1] is not an object',
      );
    },
  );

  it.each<[keyof MetagraphNeuron, unknown]>([
    ['uid', undefined],
    ['uid', -1],
    ['uid', 1.5],
    ['uid', '2'],
    ['hotkey', undefined],
    ['hotkey', ''],
    ['hotkey', 'k'.repeat(65)],
    ['hotkey', 5],
    ['coldkey', undefined],
    ['coldkey', ''],
    ['coldkey', 'k'.repeat(65)],
    ['axon_url', undefined],
    ['axon_url', '127.0.0.1:8091'],
    ['axon_url', 'ftp://127.0.0.1'],
    ['axon_url', 'https://127.0.0.1:8091'],
    ['axon_url', 'http://127.0.0.1'],
    ['axon_url', 'http://127.0.0.1:8091/axon'],
    ['axon_url', 'http://user:secret@127.0.0.1:8091'],
    ['axon_url', 'http://127.0.0.1:8091?q=1'],
    ['axon_url', 'http://127.0.0.1:8091#f'],
    ['axon_url', 8091],
    ['stake', undefined],
    ['stake', -0.1],
    ['stake', Number.NaN],
    ['stake', '12.5'],
    ['incentive', undefined],
    ['incentive', -1],
    ['incentive', Number.NaN],
    ['validator_permit', undefined],
    ['validator_permit', 'false'],
    ['validator_permit', 0],
  ])('rejects a neuron whose %s is %p, naming neurons[i].%s', (field, value) => {
    const broken = { ...metagraphNeuron(5), [field]: value };

    expect(() => parse(metagraph([metagraphNeuron(0), metagraphNeuron(1), broken]))).toThrow(
      `metagraph: neurons[2].${field} `,
    );
  });

  it('says what an axon_url must be, naming the entry', () => {
    const https = metagraphNeuron(4, { axon_url: 'https://miner.example.org:8091' });

    expect(() => parse(metagraph([metagraphNeuron(0), https]))).toThrow(
      'metagraph: neurons[1].axon_url must be http://host:port (axons speak plain HTTP; no path, credentials, query or fragment) or null',
    );
  });

  it('accepts keys of exactly 64 characters', () => {
    const longest = metagraphNeuron(0, { hotkey: 'h'.repeat(64), coldkey: 'c'.repeat(64) });

    expect(parse(metagraph([longest])).neurons).toEqual([longest]);
  });

  it('rejects two neurons with the same uid', () => {
    expect(() =>
      parse(metagraph([metagraphNeuron(0), metagraphNeuron(1), metagraphNeuron(1)])),
    ).toThrow('metagraph: duplicate uid');
  });

  it('keeps only the documented neuron fields', () => {
    const parsed = parse(metagraph([{ ...metagraphNeuron(0), trust: 0.9 }]));

    expect(parsed.neurons).toEqual([metagraphNeuron(0)]);
  });
});

describe(FileMetagraphSource.name, () => {
  let directory: string;
  let path: string;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'metagraph-'));
    path = join(directory, 'metagraph.json');
    await writeFile(path, JSON.stringify(metagraph()));
  });

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('describes itself by its path', () => {
    expect(new FileMetagraphSource(path, 13).description).toBe(`file ${path}`);
  });

  it('reads and validates the file', async () => {
    const read: MetagraphFile = await new FileMetagraphSource(path, 13).read();

    expect(read).toEqual(metagraph());
  });

  it('refuses a file that is not valid JSON or not a valid metagraph', async () => {
    const source = new FileMetagraphSource(path, 13);

    await writeFile(path, '{"neurons": [');
    await expect(source.read()).rejects.toThrow(SyntaxError);
    await writeFile(path, JSON.stringify(metagraph([metagraphNeuron(0, { stake: -1 })])));
    await expect(source.read()).rejects.toThrow('neurons[0].stake');
  });

  it('fails to read a missing file', async () => {
    await expect(
      new FileMetagraphSource(join(directory, 'absent.json'), 13).read(),
    ).rejects.toThrow(/ENOENT/);
  });

  it('calls back after the file is replaced atomically, and reads the new content', async () => {
    const source = new FileMetagraphSource(path, 13);
    const changed = jest.fn(() => Promise.resolve());
    const stop = source.watch(changed);
    try {
      // Let the watcher take its first look at the old file before replacing it. That look (a
      // stat on libuv's thread pool) is what a change is measured from: on a loaded machine it
      // can come after 100 ms, and take the replaced file for the original. So the file is
      // replaced again (a new inode each time) while no change has been seen, over a generous
      // deadline for the 1 s polls.
      await sleep(100);
      await until(
        async () => {
          if (changed.mock.calls.length > 0) return true;
          await replaceAtomically(
            path,
            metagraph([metagraphNeuron(0), metagraphNeuron(1), metagraphNeuron(2)]),
          );
          return undefined;
        },
        15_000,
        1_500,
      );

      expect(changed).toHaveBeenCalled();
      expect((await source.read()).neurons.map((entry) => entry.uid)).toEqual([0, 1, 2]);
    } finally {
      stop();
    }
  });

  it('stops calling back once the returned function is called', async () => {
    const source = new FileMetagraphSource(path, 13);
    const changed = jest.fn(() => Promise.resolve());
    const stop = source.watch(changed);
    await sleep(100);
    stop();

    await replaceAtomically(path, metagraph([metagraphNeuron(4)]));
    await sleep(1_500);

    expect(changed).not.toHaveBeenCalled();
  });

  // METAGRAPH_FILE=/nonexistent.json logged its error twice at start: the watcher called back
  // once for the file missing at its first look, as Node's watchFile does.
  it('does not call back for a file missing when it starts watching, until it is made', async () => {
    const absent = join(directory, 'absent.json');
    const source = new FileMetagraphSource(absent, 13);
    const changed = jest.fn(() => Promise.resolve());
    const stop = source.watch(changed);
    const looked = firstLookAtMissing(absent);
    try {
      // Its first look, which called the listener for the missing file (a fixed 500 ms could end
      // before it on a loaded machine: the file made next was then the original, never a change).
      await looked;
      expect(changed).not.toHaveBeenCalled();

      await writeFile(absent, JSON.stringify(metagraph()));
      await until(() => Promise.resolve(changed.mock.calls.length > 0 || undefined), 10_000);
    } finally {
      stop();
    }
  });
});
