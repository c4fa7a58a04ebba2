import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { toPydanticErrors } from './pydantic-errors';
import { Location, RequestValidationException } from './validation-error-item';

const LOCATIONS: Partial<Record<ArgumentMetadata['type'], Location>> = {
  body: 'body',
  query: 'query',
  param: 'path',
};

const PRIMITIVES = new Set<unknown>([String, Number, Boolean, Array, Object]);

/**
 * Validates DTO-typed bodies, queries and path parameters and reports every failure at once as
 * a FastAPI-style 422. Bodies forbid unknown fields (a typo is an error, as in the original);
 * query strings ignore unknown parameters, as FastAPI does.
 */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const location = LOCATIONS[metadata.type];
    const metatype = metadata.metatype;
    if (!location || !metatype || PRIMITIVES.has(metatype)) return value;

    if (location === 'body' && (value === undefined || value === null)) {
      throw new RequestValidationException([
        { loc: ['body'], msg: 'Field required', type: 'missing' },
      ]);
    }
    const notAnObject = new RequestValidationException([
      {
        loc: [location],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        type: 'model_attributes_type',
      },
    ]);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw notAnObject;

    let instance: object;
    try {
      instance = plainToInstance(metatype as new () => object, value, {
        enableImplicitConversion: false,
      });
    } catch {
      // class-transformer takes a nested object's own `constructor` field for its class and
      // throws (`{"name": {"constructor": {}}}`, found by fuzzing): such input is never valid.
      throw notAnObject;
    }
    const errors = await validate(instance, {
      whitelist: true,
      forbidNonWhitelisted: location === 'body',
      forbidUnknownValues: false,
      validationError: { target: true, value: true },
    });
    if (errors.length > 0)
      throw new RequestValidationException(toPydanticErrors(errors, [location]));
    return instance;
  }
}
