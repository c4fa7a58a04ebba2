import { MAX_BYTES_PER_ENTITY, MAX_DEPTH, readEntitiesAsTheyArrive } from './entity-stream';
import { UnreadableJsonError } from './miner-json';

/** `text` as chunks of `size` bytes, as an answer arrives. */
async function* chunksOf(text: string | Buffer, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, at + size);
}

async function read(text: string | Buffer, size = 7): Promise<unknown[]> {
  const entities: unknown[] = [];
  await readEntitiesAsTheyArrive(chunksOf(text, size), (entity) => entities.push(entity));
  return entities;
}

const entity = (n: number) => ({
  uri: `https://x.com/a/status/${n}`,
  datetime: '2026-12-01T10:00:00Z',
  content: JSON.stringify({ text: `post ${n} é "quoted"`, hashtags: ['#tao'] }),
  content_size_bytes: 40 + n,
});

describe(readEntitiesAsTheyArrive.name, () => {
  it("hands over every entity of data_entities, in order, as JSON.parse reads them, however it's cut", async () => {
    const answer = {
      name: 'GetDataEntityBucket',
      data_entity_bucket_id: { time_bucket: { id: 1 }, source: 2, label: { value: '#tao' } },
      data_entities: [entity(1), entity(2), entity(3)],
      axon: { status_code: 200 },
    };
    const text = JSON.stringify(answer);
    for (const size of [1, 7, 64, text.length])
      expect(await read(text, size)).toEqual(answer.data_entities);
  });

  it('hands over nothing from an answer without a list of entities', async () => {
    expect(await read('{"name":"GetDataEntityBucket"}')).toEqual([]);
    expect(await read('{"data_entities":{"a":{"uri":"x"}}}')).toEqual([]);
    expect(await read('{"data_entities":[]}')).toEqual([]);
  });

  it('refuses a text that is not JSON, stops short or runs on', async () => {
    await expect(read('<html>busy</html>')).rejects.toThrow(UnreadableJsonError);
    await expect(read('{"data_entities":[{"uri":"x"},')).rejects.toThrow(/ends before its end/);
    await expect(read('{"data_entities":[]} {"data_entities":[]}')).rejects.toThrow(
      UnreadableJsonError,
    );
  });

  // What a parser holds of an entity grows with its bytes: `{}` is 3 bytes, about 64 of heap.
  it('refuses an answer that goes too far without an entity ending', async () => {
    const wide = `{"data_entities":[[${'{},'.repeat(MAX_BYTES_PER_ENTITY / 3 + 1)}`;
    await expect(read(wide, 64 * 1024)).rejects.toThrow(/without an entity ending/);
    const long = `{"data_entities":[{"content":"${'a'.repeat(MAX_BYTES_PER_ENTITY)}"}]}`;
    await expect(read(long, 64 * 1024)).rejects.toThrow(/without an entity ending/);
  });

  // Each level is a frame of the parser's stack, however few bytes it takes.
  it('refuses an answer nested deeper than an honest one can be', async () => {
    const honest = {
      data_entity_bucket_id: { label: { value: '#tao' } },
      data_entities: [entity(1)],
    };
    expect(await read(JSON.stringify(honest))).toEqual([entity(1)]);
    await expect(read(`{"data_entities":[${'['.repeat(MAX_DEPTH)}`)).rejects.toThrow(
      `nests deeper than ${MAX_DEPTH}`,
    );
  });

  it('reads many small entities past that bound, even in one chunk', async () => {
    const many = Array.from({ length: 30_000 }, (_, n) => entity(n));
    const text = JSON.stringify({ data_entities: many });
    expect(text.length).toBeGreaterThan(MAX_BYTES_PER_ENTITY);
    const entities = await read(text, text.length);
    expect(entities).toHaveLength(many.length);
    expect(entities[29_999]).toEqual(many[29_999]);
  });
});
