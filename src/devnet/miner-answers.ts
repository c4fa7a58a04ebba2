import { BucketKey, DataItem } from '../network/protocol';
import { compileQuery } from '../network/query-matcher';
import { WireDataEntity } from '../network/sn13/entities';
import { WireBucketId, wireBucketId } from '../network/sn13/messages';
import { MinerBehaviour } from './behaviour';
import {
  corruptEntity,
  corruptIndex,
  corruptRecord,
  fabricateEntities,
  fabricateIndex,
  fabricateItems,
  outsideTheHour,
  overclaimIndex,
  underAnotherLabel,
  withBrokenText,
} from './miner-faults';
import { toWireEntity } from './miner-records';
import { MinerRequest, OnDemandInputs } from './miner-requests';
import { MinerStore } from './miner-store';
import { hashUnit, Rng } from './rng';

/** What a miner answers from: its items, and what it disguises fabrications with. */
export interface AnswerContext {
  uid: number;
  seed: number;
  /** The corpus' `now`: fabricated data is placed relative to it. */
  now: Date;
  store: MinerStore;
  /** Items to disguise fabricated answers as (usually the whole corpus). */
  templates: readonly DataItem[];
  /** The miner's content stream: fabrications and misplaced hours draw from it. */
  rng: Rng;
}

/**
 * A simulated miner's answers: each synapse's output fields in their real shapes, from the
 * items it holds, as this call's faults (behaviour.ts) bend them. The HTTP side, the axon's
 * checks and the choice of faults are the server's (miner-server.ts).
 */
export class MinerAnswers {
  constructor(private readonly context: AnswerContext) {}

  /** The synapse's output fields, or 'error' where a real miner fails. */
  answer(request: MinerRequest, faults: MinerBehaviour): object | 'error' {
    switch (request.synapse) {
      case 'OnDemandRequest':
        return {
          data: request.query === null ? [] : this.answerOnDemand(request.query, faults),
          version: 4,
        };
      case 'GetMinerIndex':
        // Real miners compare the version with 4: a missing one fails, an old one gets nothing.
        if (request.version === null) return 'error';
        return {
          compressed_index_serialized: request.version < 4 ? null : this.serializedIndex(faults),
          version: 4,
        };
      case 'GetDataEntityBucket':
        return { data_entities: this.answerBucket(request, faults), version: 4 };
      case 'GetContentsByBuckets':
        return {
          bucket_ids_to_contents: this.answerContents(request.buckets, faults),
          version: 4,
        };
    }
  }

  private keeps(uri: string): boolean {
    return hashUnit(this.context.seed, 'partial', this.context.uid, uri) < 0.5;
  }

  private answerOnDemand(query: OnDemandInputs, faults: MinerBehaviour): unknown[] {
    let items = this.context.store.matching(query);
    if (faults.partial) items = items.filter((item) => this.keeps(item.uri));
    items = items.slice(0, query.limit);
    if (faults.fabricate) {
      const count = Math.min(query.limit, Math.max(items.length, 5));
      const templates = this.context.templates.filter((item) => item.source === query.source);
      const matcher = compileQuery(query);
      const made = fabricateItems(this.context.rng, matcher, templates, count, this.context.now);
      return made.map(toWireEntity);
    }
    const entities = items.map((item) =>
      faults.brokenText ? toWireEntity(withBrokenText(item)) : this.context.store.entityOf(item),
    );
    return faults.wrongSchema ? entities.map(corruptEntity) : entities;
  }

  private serializedIndex(faults: MinerBehaviour): string {
    let index = this.context.store.minerIndex();
    if (faults.fabricate) index = fabricateIndex(index, this.context.now);
    if (faults.overclaimSizes !== undefined) index = overclaimIndex(index, faults.overclaimSizes);
    return JSON.stringify(faults.wrongSchema ? corruptIndex(index) : index);
  }

  private answerBucket(
    request: Extract<MinerRequest, { synapse: 'GetDataEntityBucket' }>,
    faults: MinerBehaviour,
  ): unknown[] {
    const entities = this.bucketEntities(request.bucket, faults);
    return faults.wrongSchema ? entities.map(corruptEntity) : entities;
  }

  /**
   * `[bucket id, [record JSON, …]]` per bucket asked. A real miner looks a null label up as the
   * string 'NULL', so unlabeled buckets come back empty.
   */
  private answerContents(buckets: BucketKey[], faults: MinerBehaviour): [WireBucketId, string[]][] {
    return buckets.map((bucket) => {
      if (bucket.label === null) return [wireBucketId(bucket), []];
      const contents = this.bucketEntities(bucket, faults).map((entity) => entity.content);
      return [wireBucketId(bucket), faults.wrongSchema ? contents.map(corruptRecord) : contents];
    });
  }

  /** The stored records of a bucket, as this call's faults bend them. */
  private bucketEntities(bucket: BucketKey, faults: MinerBehaviour): WireDataEntity[] {
    let entities: WireDataEntity[];
    if (faults.wrongHour || faults.wrongLabel || faults.brokenText) {
      let items = [...this.context.store.bucketItems(bucket)];
      if (faults.wrongHour) items = outsideTheHour(this.context.rng, items, bucket);
      if (faults.wrongLabel) items = underAnotherLabel(items, bucket);
      if (faults.brokenText) items = items.map(withBrokenText);
      entities = items.map(toWireEntity);
    } else entities = this.context.store.bucket(bucket);
    if (faults.partial) entities = entities.filter((entity) => this.keeps(entity.uri));
    if (faults.fabricate)
      entities = fabricateEntities(this.context.rng, entities, bucket, this.context.templates);
    return entities;
  }
}
