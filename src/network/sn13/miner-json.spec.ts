import { generateCorpus } from '../../devnet/corpus';
import { toWireEntity } from '../../devnet/miner-records';
import {
  ANSWER_BYTES_PER_VALUE,
  holdsMoreValues,
  maxAnswerValues,
  MAX_INDEX_ANSWER_VALUES,
  MAX_RECORD_VALUES,
  parseMinerJson,
  UnreadableJsonError,
} from './miner-json';

/** The fewest containers and commas `text` may hold and still be accepted. */
function counted(text: string): number {
  let [low, high] = [0, text.length];
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (holdsMoreValues(text, middle)) low = middle + 1;
    else high = middle;
  }
  return low;
}

describe(holdsMoreValues.name, () => {
  it.each([
    ['0', 0],
    ['[]', 1],
    ['{}', 1],
    ['[1,2,3]', 3],
    ['{"a":[{},{}],"b":{"c":null}}', 7],
    // Inside strings nothing counts: brackets, commas, escaped quotes and backslashes.
    ['["{[,]}"]', 1],
    ['["a\\"[,{","b"]', 2],
    ['["a\\\\",[]]', 3],
    ['"\\\\\\"[,"', 0],
  ])('counts the containers and commas outside strings of %s', (text, containers) => {
    expect(counted(text)).toBe(containers);
  });

  it('counts text that is not JSON as far as it goes (JSON.parse refuses it)', () => {
    expect(counted('[[[,"unclosed [[[')).toBe(4);
  });
});

describe(parseMinerJson.name, () => {
  it('parses a text within its bound', () => {
    expect(parseMinerJson('{"a":[1,2]}', 3)).toEqual({ a: [1, 2] });
  });

  it('refuses a text past its bound before parsing it, and one that is not JSON', () => {
    const parse = jest.spyOn(JSON, 'parse');
    try {
      expect(() => parseMinerJson('[[],[]]', 3)).toThrow(
        new UnreadableJsonError('holds more than 3 values'),
      );
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
    expect(() => parseMinerJson('{"a":', 10)).toThrow(new UnreadableJsonError('is not JSON'));
  });
});

describe(maxAnswerValues.name, () => {
  it('bounds an index answer by its fields and the others by their byte cap', () => {
    expect(maxAnswerValues('GetMinerIndex', 96 * 1024 * 1024)).toBe(MAX_INDEX_ANSWER_VALUES);
    expect(maxAnswerValues('GetDataEntityBucket', 16 * 1024 * 1024)).toBe(1_048_576);
    expect(maxAnswerValues('OnDemandRequest', 1000)).toBe(62);
  });

  // The devnet's records are the subnet's shapes (miner-records.ts): honest answers of them
  // stay far below one value per ANSWER_BYTES_PER_VALUE bytes, and each record far below
  // MAX_RECORD_VALUES.
  it('leaves honest answers of entities and of contents far below their bound', () => {
    const corpus = generateCorpus({ seed: 5, size: { x: 400, reddit: 400 } });
    const entities = corpus.items.map(toWireEntity);
    const answers = [
      JSON.stringify({ name: 'GetDataEntityBucket', data_entities: entities }),
      JSON.stringify({
        name: 'GetContentsByBuckets',
        bucket_ids_to_contents: [
          [{ time_bucket: { id: 1 }, source: 2, label: null }, entities.map((e) => e.content)],
        ],
      }),
    ];
    for (const answer of answers)
      expect(counted(answer) * ANSWER_BYTES_PER_VALUE * 2).toBeLessThan(answer.length);
    const mostInARecord = Math.max(...entities.map((entity) => counted(entity.content)));
    expect(mostInARecord * 100).toBeLessThan(MAX_RECORD_VALUES);
  });
});
