import { ServerResponse } from 'node:http';
import { SynapseName } from '../common/synapse-names';
import { DEFAULT_MINER_MAX_INDEX_RESPONSE_BYTES } from '../config/miner-answer-sizes';
import { DataItem, timeBucketId } from '../network/protocol';
import { wireBucketId } from '../network/sn13/messages';
import { streamJsonArray } from './http-util';
import { sourceIdOf, toWireEntity } from './miner-records';

/** The gateway must refuse bodies over 16 MB; the oversize fault sends a little more than 17 MB. */
export const OVERSIZE_BYTES = 17 * 1024 * 1024 + 256 * 1024;

/** An index has a cap of its own, far larger (an honest one can be 75 MB): 1 MiB past it. */
export const OVERSIZE_INDEX_BYTES = DEFAULT_MINER_MAX_INDEX_RESPONSE_BYTES + 1024 * 1024;

/**
 * The `oversize` fault: a valid-looking answer of the synapse streamed past OVERSIZE_BYTES
 * (OVERSIZE_INDEX_BYTES for GetMinerIndex), made of copies of `sample` under distinct uris (an
 * index of made-up labels without one).
 */
export function streamOversize(
  response: ServerResponse,
  synapse: SynapseName,
  sample: DataItem | undefined,
): Promise<void> {
  if (synapse === 'GetMinerIndex' || !sample) {
    const ids = Array.from({ length: 24 }, (_, offset) => 480_000 + offset);
    const buckets = `"time_bucket_ids":[${ids.join(',')}],"sizes_bytes":[${ids.map(() => 4096).join(',')}]`;
    // The index travels as a JSON string: its quotes are escaped inside the answer.
    const element = (index: number): string =>
      `{"label":"#oversize_${index}",${buckets}}`.replace(/"/g, '\\"');
    const prefix = '{"compressed_index_serialized":"{\\"sources\\":{\\"2\\":[';
    const bytes = synapse === 'GetMinerIndex' ? OVERSIZE_INDEX_BYTES : OVERSIZE_BYTES;
    return streamJsonArray(response, prefix, element, ']}}"}', bytes);
  }
  const copy = (text: string, index: number): string =>
    text.split(sample.uri).join(`${sample.uri}?copy=${index}`);
  if (synapse === 'GetContentsByBuckets') {
    // One bucket whose records (JSON strings) never end.
    const record = toWireEntity(sample).content;
    const bucket = JSON.stringify(
      wireBucketId({
        source: sourceIdOf(sample),
        label: sample.label,
        timeBucket: timeBucketId(new Date(sample.datetime)),
      }),
    );
    const content = (index: number): string => JSON.stringify(copy(record, index));
    const prefix = `{"bucket_ids_to_contents":[[${bucket},[`;
    return streamJsonArray(response, prefix, content, ']]]}', OVERSIZE_BYTES);
  }
  // Every element a copy of a real entity under a distinct uri: looks like a legitimate answer.
  // The uri appears twice, as the entity's and as the record's url: both change.
  const entity = JSON.stringify(toWireEntity(sample));
  const element = (index: number): string => copy(entity, index);
  const prefix = synapse === 'OnDemandRequest' ? '{"data":[' : '{"data_entities":[';
  return streamJsonArray(response, prefix, element, ']}', OVERSIZE_BYTES);
}
