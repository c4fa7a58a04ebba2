import { validated } from '../../../test/support/validation';
import { PageLimit } from './page-limit';

class Page {
  @PageLimit(500, { paged: true })
  limit?: number;
}

const validatedLimit = (limit: string) => validated(Page, { limit }, 'query');

describe(PageLimit.name, () => {
  it('takes a limit from 1 to its maximum, and refuses one past either end or not whole', async () => {
    expect(await validatedLimit('1')).toEqual(Object.assign(new Page(), { limit: 1 }));
    expect(await validatedLimit('500')).toEqual(Object.assign(new Page(), { limit: 500 }));
    expect(await validatedLimit('501')).toEqual([
      {
        loc: ['query', 'limit'],
        msg: 'Input should be less than or equal to 500',
        type: 'less_than_equal',
        ctx: { le: 500 },
      },
    ]);
    expect(await validatedLimit('0')).toEqual([
      {
        loc: ['query', 'limit'],
        msg: 'Input should be greater than or equal to 1',
        type: 'greater_than_equal',
        ctx: { ge: 1 },
      },
    ]);
    expect(await validatedLimit('1.5')).toMatchObject([
      { loc: ['query', 'limit'], type: 'int_parsing' },
    ]);
  });

  it('takes a request without a limit (the list decides its page)', async () => {
    expect(await validated(Page, {}, 'query')).toEqual(new Page());
  });
});
