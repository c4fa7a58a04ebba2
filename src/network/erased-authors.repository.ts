import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { authorOfItem, DataItem } from './protocol';
import { SourceId } from './sources';

/**
 * The register as on-demand answers read it: items come straight from miners there, written by
 * no insert that could leave them out.
 */
@Injectable()
export class ErasedAuthorsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * `items` without those of a registered author of `source`. One indexed query with the
   * answer's distinct authors (none for an empty answer): a query's fan-out to miners takes
   * hundreds of milliseconds, this one a millisecond, and it is the one read that keeps an
   * erased author out of live answers and of the cache they are kept in.
   */
  async withoutErased(source: SourceId, items: readonly DataItem[]): Promise<DataItem[]> {
    if (items.length === 0) return [...items];
    const authors = [...new Set(items.map(authorOfItem))];
    const rows = await this.dataSource.query<{ author: string }[]>(
      'SELECT author FROM erased_authors WHERE source = $1 AND author = ANY($2::text[])',
      [source, authors],
    );
    if (rows.length === 0) return [...items];
    const erased = new Set(rows.map((row) => row.author));
    return items.filter((item) => !erased.has(authorOfItem(item)));
  }
}
