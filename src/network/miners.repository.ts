import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

export interface MinerCounts {
  total: number;
  available: number;
}

@Injectable()
export class MinersRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Available = a registered non-validator whose circuit is not open (state `failing`). */
  async countMiners(): Promise<MinerCounts> {
    const [row] = await this.dataSource.query<MinerCounts[]>(
      `SELECT count(*) FILTER (WHERE NOT validator_permit AND state <> 'deregistered')::int AS total,
              count(*) FILTER (WHERE NOT validator_permit AND state = 'active')::int AS available
       FROM miners`,
    );
    return row;
  }
}
