/** Swagger options shared by the X and Reddit item schemas. */

export const COUNT = { type: 'integer', format: 'int64', nullable: true } as const;

export const URI = {
  format: 'uri',
  description: 'Where the item is published; unique per item',
} as const;

export const DATETIME = {
  format: 'date-time',
  description:
    "When it was posted, in UTC, as the hosted API writes it (Python's `datetime.isoformat()`: " +
    '`+00:00`, a fraction of six digits only when there is one)',
  example: '2026-11-20T14:03:51+00:00',
} as const;

export const CONTENT_SIZE_BYTES = {
  ...COUNT,
  minimum: 0,
  description:
    "UTF-8 byte length of the miner's stored record the item was read from (what the network " +
    'measures and rewards). Null only on items the gateway stored before it kept sizes (rows of ' +
    'tasks collected across that upgrade).',
} as const;

/** Miners' URLs are passed on as the record holds them: no `format` is promised for them. */
export const URLS = {
  type: 'array',
  items: { type: 'string' },
  nullable: true,
} as const;
