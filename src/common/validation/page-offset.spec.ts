import { Clock } from '../clock/clock';
import { RequestValidationPipe } from '../errors/request-validation.pipe';
import { RequestValidationException, ValidationErrorItem } from '../errors/validation-error-item';
import { PageOffset } from './page-offset';

class Page {
  @PageOffset('Rows to skip')
  offset?: number;
}

async function validated(offset: string): Promise<Page | ValidationErrorItem[]> {
  try {
    return (await new RequestValidationPipe(new Clock()).transform(
      { offset },
      { type: 'query', metatype: Page },
    )) as Page;
  } catch (error) {
    if (error instanceof RequestValidationException) return error.errors;
    throw error;
  }
}

describe(PageOffset.name, () => {
  it('takes an offset from 0 to the int32 maximum the document gives, and refuses one past either end', async () => {
    expect(await validated('0')).toEqual(Object.assign(new Page(), { offset: 0 }));
    expect(await validated('2147483647')).toEqual(
      Object.assign(new Page(), { offset: 2_147_483_647 }),
    );
    expect(await validated('2147483648')).toEqual([
      {
        loc: ['query', 'offset'],
        msg: 'Input should be less than or equal to 2147483647',
        type: 'less_than_equal',
        ctx: { le: 2_147_483_647 },
      },
    ]);
    expect(await validated('-1')).toEqual([
      {
        loc: ['query', 'offset'],
        msg: 'Input should be greater than or equal to 0',
        type: 'greater_than_equal',
        ctx: { ge: 0 },
      },
    ]);
  });
});
