import { refuseReplacementPatterns } from './init-script-text';

describe(refuseReplacementPatterns.name, () => {
  it.each(['^[a-z]*$`', "costs $'", '$&', '$$', 'group $1', 'group $12'])(
    'refuses a string holding %s, naming where it is',
    (text) => {
      const document = { info: { title: 'API', description: text } };
      expect(() => refuseReplacementPatterns(document)).toThrow('#/info/description');
    },
  );

  it('refuses a key holding one, and finds strings inside arrays', () => {
    expect(() => refuseReplacementPatterns({ paths: { '/a$1': {} } })).toThrow('#/paths');
    expect(() => refuseReplacementPatterns({ tags: [{ name: 'x' }, { name: '$&' }] })).toThrow(
      '#/tags/1/name',
    );
  });

  it('lets a dollar sign be followed by anything else', () => {
    const document = {
      $ref: '#/components/schemas/X',
      pattern: '^[^\\x00]*$',
      example: '{"pattern":"^a*$"}',
      cost: '$ 5, $x, ${name}, $<name>',
      count: 3,
      flag: true,
      nothing: null,
    };
    expect(() => refuseReplacementPatterns(document)).not.toThrow();
  });
});
