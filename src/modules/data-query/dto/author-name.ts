import { ValidateBy, ValidationArguments, ValidationOptions } from 'class-validator';
import { Source } from '../../../common/source';
import { namesAuthor, REDDIT_NAME_CHARACTERS } from '../../../network/protocol';

/**
 * The OpenAPI `pattern` of a username: white space, an optional `@`, a username, white space
 * (what authorName reads it as). One pattern serves both sources, so it takes Reddit's `-`; an X
 * handle with one is refused by NamesAnAuthor, which knows the query's source.
 */
export const AUTHOR_NAME_PATTERN = `^\\s*@?${REDDIT_NAME_CHARACTERS}\\s*$`;

const MESSAGES: Record<Source, string> = {
  x: 'must be an X handle: 1 to 50 letters, digits or _, after an optional @',
  reddit: 'must be a Reddit username: 1 to 50 letters, digits, _ or -, after an optional @',
};

/**
 * A username of the query's source once trimmed and stripped of its leading `@` (namesAuthor).
 * Queries match authors by authorKey, which drops empty names: `"@"` or `" "` asked for nobody,
 * so the query answered everyone's posts (found by an audit); `"@@elon"` or `"@ elon"` asked
 * miners and the matcher for an author no record has. A query whose source is not one is held
 * to Reddit's rule, the wider, so that only its source is reported. Reported as pydantic
 * reports a validator's ValueError.
 */
export const NamesAnAuthor = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'namesAnAuthor',
      validator: {
        validate: (value: unknown, args?: ValidationArguments) =>
          typeof value === 'string' && namesAuthor(value, sourceOf(args)),
        defaultMessage: (args?: ValidationArguments) => MESSAGES[sourceOf(args)],
      },
    },
    options,
  );

/** The query's source, normalized by IsSource before validation runs. */
function sourceOf(args: ValidationArguments | undefined): Source {
  const source = (args?.object as { source?: unknown } | undefined)?.source;
  return source === 'x' ? 'x' : 'reddit';
}
