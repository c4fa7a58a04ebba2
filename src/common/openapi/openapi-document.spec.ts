import { budgetsText } from './openapi-document';

describe(budgetsText.name, () => {
  const example = (windowSeconds: number) =>
    /`RateLimit: "default";r=(\d+);t=(\d+)`/
      .exec(budgetsText({ regularPerWindow: 100, validatorPerWindow: 1000, windowSeconds }))
      ?.slice(1);

  it("gives the IETF headers of a key's first request, a sixtieth of the window later", () => {
    expect(example(3600)).toEqual(['99', '3540']);
    expect(example(30)).toEqual(['99', '29']);
    expect(example(1)).toEqual(['99', '1']);
  });
});
