import { ValidateBy, ValidationOptions } from 'class-validator';
import { authorKey } from '../../../network/protocol';

/**
 * The OpenAPI `pattern` of a username: after white space, a character other than white space
 * and `@`, or an `@` followed by one other than white space (the `@` is dropped: authorKey).
 */
export const AUTHOR_NAME_PATTERN = '^\\s*(?:[^\\s@]|@\\s*\\S)';

/**
 * A username that names someone once trimmed and stripped of its leading `@`. Queries match
 * authors by authorKey, which drops empty names: `"@"` or `" "` asked for nobody, so the query
 * answered everyone's posts (found by an audit). Reported as pydantic reports a pattern.
 */
export const NamesAnAuthor = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'namesAnAuthor',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && authorKey(value) !== '',
        defaultMessage: () => 'must name an author: more than white space and a leading @',
      },
    },
    options,
  );
