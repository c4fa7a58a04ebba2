import { namesTag } from './entity-tags';

describe('namesTag', () => {
  const weak = 'W/"v1-abc"';
  const strong = '"v1-abc"';

  it('names any representation by *, surrounding white space ignored', () => {
    expect(namesTag('*', weak, 'weak')).toBe(true);
    expect(namesTag(' * ', strong, 'strong')).toBe(true);
  });

  it('finds the tag anywhere in a list, with or without white space and empty elements', () => {
    expect(namesTag(`"other", ${weak}`, weak, 'weak')).toBe(true);
    expect(namesTag(`"other",${strong} ,`, strong, 'strong')).toBe(true);
    expect(namesTag(`, ,"other",\t${weak}`, weak, 'weak')).toBe(true);
    // obs-text (§5.5) is an etagc: Node hands a header's bytes over as Latin-1 characters.
    expect(namesTag(`"caf\u00e9", ${weak}`, weak, 'weak')).toBe(true);
    expect(namesTag('"other", W/"more"', weak, 'weak')).toBe(false);
  });

  it('compares weakly whichever side is weak (RFC 9110 §13.1.2)', () => {
    expect(namesTag(weak, weak, 'weak')).toBe(true);
    expect(namesTag(strong, weak, 'weak')).toBe(true);
    expect(namesTag(weak, strong, 'weak')).toBe(true);
  });

  it('compares strongly only two strong tags, equal (RFC 9110 §13.1.1)', () => {
    expect(namesTag(strong, strong, 'strong')).toBe(true);
    expect(namesTag(weak, strong, 'strong')).toBe(false);
    expect(namesTag(weak, weak, 'strong')).toBe(false);
  });

  it('reads a comma inside the quotes as part of the tag, not the list', () => {
    expect(namesTag('"a,b"', '"a,b"', 'strong')).toBe(true);
    expect(namesTag('"x,"a"', '"a"', 'weak')).toBe(false);
  });

  it('names nothing by a value that is no list of entity tags', () => {
    expect(namesTag('v1-abc', strong, 'weak')).toBe(false);
    expect(namesTag('W/ "v1-abc"', strong, 'weak')).toBe(false);
    expect(namesTag(`*, ${strong}`, strong, 'weak')).toBe(false);
    expect(namesTag(`${strong} junk`, strong, 'weak')).toBe(false);
    // Not the tags read before the value stops being a list: none at all.
    expect(namesTag(`${strong}, junk`, strong, 'weak')).toBe(false);
    expect(namesTag(`${strong}, "open`, strong, 'strong')).toBe(false);
    expect(namesTag('', strong, 'weak')).toBe(false);
  });
});
