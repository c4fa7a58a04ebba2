import { timeBucketId } from '../network/protocol';
import { generateCorpus } from './corpus';
import { MinerAnswers } from './miner-answers';
import { MinerRequest } from './miner-requests';
import { MinerStore } from './miner-store';
import { createRng } from './rng';

/**
 * The output fields of each synapse as a subnet 13 miner fills them (neurons/miner.py): every
 * handler that answers sets `synapse.version = PROTOCOL_VERSION`, 4.
 */

const corpus = generateCorpus({
  seed: 3,
  now: new Date('2024-06-01T00:00:00Z'),
  size: { x: 20, reddit: 20 },
});
const answers = new MinerAnswers({
  uid: 0,
  seed: 3,
  now: corpus.now,
  store: new MinerStore(corpus.items),
  templates: corpus.items,
  rng: createRng(3),
});
const item = corpus.items[0];
const bucket = {
  timeBucket: timeBucketId(new Date(item.datetime)),
  source: item.source === 'X' ? 2 : 1,
  label: item.label,
} as const;

describe(MinerAnswers.name, () => {
  it.each<MinerRequest>([
    { synapse: 'GetMinerIndex', version: 4 },
    { synapse: 'GetDataEntityBucket', bucket },
    { synapse: 'GetContentsByBuckets', buckets: [bucket] },
  ])('answers $synapse with version 4', (request) => {
    expect(answers.answer(request, {})).toMatchObject({ version: 4 });
  });
});
