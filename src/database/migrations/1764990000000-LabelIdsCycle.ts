import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Label ids are taken from an int4 sequence, one per new label, and labels no index names are
 * deleted at each sync (IndexLabelsRepository.dropUnused): the rows stay few, but a miner
 * filing 350,000 fresh labels a sync would still use up the sequence (7.75 M a day: 277 days for
 * one such miner, 28 for ten), after which every index replace failed. Cycling, the sequence
 * starts again at 1 past its last value, and a new label takes the first id it reaches that no
 * label holds (IndexLabelsRepository.resolve skips the others). Only the sequence changes: a release before it
 * runs as it did, so a rolling upgrade works.
 */
export class LabelIdsCycle1764990000000 implements MigrationInterface {
  name = 'LabelIdsCycle1764990000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER SEQUENCE labels_id_seq CYCLE');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER SEQUENCE labels_id_seq NO CYCLE');
  }
}
