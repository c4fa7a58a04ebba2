import { ApiPropertyOptions, getSchemaPath } from '@nestjs/swagger';
import { RedditItemDto } from './reddit-item.dto';
import { XItemDto } from './x-item.dto';

/**
 * The items on-demand queries and query_bucket answer with (and task datasets hold), as the
 * network builds them (network/sn13/records.ts), in the shapes of the subnet's hosted on-demand
 * API. Services assign the network's items to these without a cast.
 */
export type DataItemDto = XItemDto | RedditItemDto;

/**
 * A list of items of either source: `oneOf` the two item schemas, told apart by `source`. The
 * class using it must register both with `@ApiExtraModels(XItemDto, RedditItemDto)`.
 */
export function dataItemsProperty(description: string): ApiPropertyOptions {
  return {
    description,
    type: 'array',
    items: {
      oneOf: [{ $ref: getSchemaPath(XItemDto) }, { $ref: getSchemaPath(RedditItemDto) }],
      discriminator: {
        propertyName: 'source',
        mapping: { X: getSchemaPath(XItemDto), REDDIT: getSchemaPath(RedditItemDto) },
      },
    },
  };
}
