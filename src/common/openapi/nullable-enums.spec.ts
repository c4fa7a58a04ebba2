import { listNullInNullableEnums } from './nullable-enums';

describe(listNullInNullableEnums.name, () => {
  it('adds null to a nullable enum, at any depth, once', () => {
    const document = {
      components: {
        schemas: {
          Health: {
            properties: {
              network: { type: 'string', enum: ['subtensor', 'file'], nullable: true },
            },
          },
        },
      },
      paths: { '/a': { get: { parameters: [{ schema: { enum: ['x'], nullable: true } }] } } },
    };
    listNullInNullableEnums(document);
    listNullInNullableEnums(document);
    expect(document.components.schemas.Health.properties.network.enum).toEqual([
      'subtensor',
      'file',
      null,
    ]);
    expect(document.paths['/a'].get.parameters[0].schema.enum).toEqual(['x', null]);
  });

  it('leaves an enum that is not nullable, and examples, as they are', () => {
    const document = {
      status: { enum: ['healthy'] },
      nullableFalse: { enum: ['a'], nullable: false },
      example: { enum: ['a'], nullable: true },
      examples: { one: { value: { enum: ['b'], nullable: true } } },
    };
    const before = structuredClone(document);
    listNullInNullableEnums(document);
    expect(document).toEqual(before);
  });
});
