import 'reflect-metadata';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { getMetadataStorage } from 'class-validator';

type Dto = abstract new (...args: never[]) => unknown;

const READ_FROM = new Map([
  [RouteParamtypes.BODY, 'body'],
  [RouteParamtypes.QUERY, 'query'],
  [RouteParamtypes.PARAM, 'path'],
]);

/** Every DTO a controller method takes from the body, the query or the path, by where. */
function requestDtos(): Map<Dto, string> {
  const modules = join(__dirname, '..', '..', 'modules');
  const files = readdirSync(modules, { recursive: true, encoding: 'utf8' }).filter((file) =>
    file.endsWith('.controller.ts'),
  );
  const found = new Map<Dto, string>();
  for (const file of files) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const exported = require(join(modules, file)) as Record<string, unknown>;
    for (const controller of Object.values(exported)) {
      if (typeof controller !== 'function') continue;
      if (Reflect.getMetadata(PATH_METADATA, controller) === undefined) continue;
      for (const method of Object.getOwnPropertyNames(controller.prototype)) {
        const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) ?? {}) as Record<
          string,
          { index: number }
        >;
        const types = (Reflect.getMetadata('design:paramtypes', controller.prototype, method) ??
          []) as unknown[];
        for (const [key, { index }] of Object.entries(args)) {
          const where = READ_FROM.get(Number(key.split(':')[0]));
          const type = types[index];
          if (where && typeof type === 'function' && type !== String && type !== Object)
            found.set(type as Dto, `${controller.name}.${method} ${where}`);
        }
      }
    }
  }
  return found;
}

/** The fields the OpenAPI document shows for a DTO (its @ApiProperty decorators). */
function documented(dto: Dto): string[] {
  const names = (Reflect.getMetadata('swagger/apiModelPropertiesArray', dto.prototype) ??
    []) as string[];
  return names.map((name) => name.replace(/^:/, '')).sort();
}

/** The fields the validation pipe reads (class-validator decorators): it drops any other. */
function validated(dto: Dto): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  return [...new Set(metadata.map((entry) => entry.propertyName))].sort();
}

// The validation pipe reads only the fields class-validator knows (request-validation.pipe.ts):
// a field documented with @ApiProperty but no validation decorator is shown in the document
// and silently ignored, answering as if it were not sent; one validated but not documented is
// taken but not shown. Neither the snapshot nor the contract check can tell (a newcomer's
// audit added a query filter, forgot class-validator, and every check passed).
describe('request DTOs', () => {
  const dtos = requestDtos();

  it('are found in every controller', () => {
    expect(dtos.size).toBeGreaterThan(10);
  });

  it.each([...dtos].map(([dto, where]) => [dto.name, where, dto] as const))(
    '%s (%s) documents exactly the fields it validates',
    (_name, _where, dto) => {
      expect(documented(dto)).toEqual(validated(dto));
    },
  );
});
