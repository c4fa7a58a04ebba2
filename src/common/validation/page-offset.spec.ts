import { validated } from '../../../test/support/validation';
import { PageOffset } from './page-offset';

class Page {
  @PageOffset('Rows to skip')
  offset?: number;
}

const validatedOffset = (offset: string) => validated(Page, { offset }, 'query');

describe(PageOffset.name, () => {
  it('takes an offset from 0 to the int32 maximum the document gives, and refuses one past either end', async () => {
    expect(await validatedOffset('0')).toEqual(Object.assign(new Page(), { offset: 0 }));
    expect(await validatedOffset('2147483647')).toEqual(
      Object.assign(new Page(), { offset: 2_147_483_647 }),
    );
    expect(await validatedOffset('2147483648')).toEqual([
      {
        loc: ['query', 'offset'],
        msg: 'Input should be less than or equal to 2147483647',
        type: 'less_than_equal',
        ctx: { le: 2_147_483_647 },
      },
    ]);
    expect(await validatedOffset('-1')).toEqual([
      {
        loc: ['query', 'offset'],
        msg: 'Input should be greater than or equal to 0',
        type: 'greater_than_equal',
        ctx: { ge: 0 },
      },
    ]);
  });
});
