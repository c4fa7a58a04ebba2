import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A neuron's stake may be unknown (null): a node that answers get_neurons_lite but neither the
 * mechagraph nor get_subnet_state gives no total stake, and get_neurons_lite's own `stake` is
 * only the owner's part (docs/decisions.md, "The metagraph from the chain").
 */
export class UnknownStake1764731000000 implements MigrationInterface {
  name = 'UnknownStake1764731000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE miners ALTER COLUMN stake DROP NOT NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('UPDATE miners SET stake = 0 WHERE stake IS NULL');
    await queryRunner.query('ALTER TABLE miners ALTER COLUMN stake SET NOT NULL');
  }
}
