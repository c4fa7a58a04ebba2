import { RequestValidationPipe } from '../../../common/errors/request-validation.pipe';
import {
  RequestValidationException,
  ValidationErrorItem,
} from '../../../common/errors/validation-error-item';
import { LabelQueryDto } from './stats-requests.dto';

async function errorsFor(query: Record<string, unknown>): Promise<ValidationErrorItem[]> {
  try {
    await new RequestValidationPipe().transform(query, { type: 'query', metatype: LabelQueryDto });
    return [];
  } catch (error) {
    if (error instanceof RequestValidationException) return error.errors;
    throw error;
  }
}

describe(LabelQueryDto.name, () => {
  const tooShort = {
    loc: ['query', 'label'],
    msg: 'String should have at least 1 character',
    type: 'string_too_short',
    ctx: { min_length: 1 },
  };

  it.each(['', '  ', '\t\n', '\u00a0'])(
    'refuses the label %j as too short: it is empty once trimmed',
    async (label) => {
      expect(await errorsFor({ label })).toEqual([tooShort]);
    },
  );

  it('takes a label with surrounding white space (trimmed later)', async () => {
    expect(await errorsFor({ label: ' #BitCoin ' })).toEqual([]);
  });
});
