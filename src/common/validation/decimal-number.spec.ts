import { decimalNumber } from './decimal-number';

describe(decimalNumber.name, () => {
  it.each([
    ['0.5', 0.5],
    ['5', 5],
    ['-2.5e-3', -0.0025],
    ['1E2', 100],
    ['05', 5],
    ['-0', 0],
    ['1e400', Infinity],
  ])('reads %j as %p', (text, number) => {
    expect(decimalNumber(text)).toBe(number);
    expect(Object.is(decimalNumber(text), -0)).toBe(false);
  });

  it.each(['', ' 0.5', '0.5 ', '+5', '.5', '5.', '0x10', '1_000', 'inf', 'Infinity', 'NaN', '1e'])(
    'leaves %j as it came',
    (text) => expect(decimalNumber(text)).toBe(text),
  );

  it.each([null, true, 1.5, {}])('leaves %p as it came', (value) =>
    expect(decimalNumber(value)).toBe(value),
  );
});
