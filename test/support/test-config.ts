import { AppConfig, SubtensorConfig } from '../../src/config/app-config';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load-config';

/**
 * The settings a test changes, checked against AppConfig: a misspelled or wrong-typed field does
 * not compile. Objects are given in part; a field whose type allows `undefined` (an optional
 * part such as `network.subtensor`, unset by default) and every array are given whole, as there
 * is no default to fill the rest from.
 */
export type ConfigOverrides<T> = {
  [K in keyof T]?: undefined extends T[K]
    ? T[K]
    : T[K] extends readonly unknown[]
      ? T[K]
      : T[K] extends object
        ? ConfigOverrides<T[K]>
        : T[K];
};

/**
 * The environment of the defaults: the test tier's, with nothing else set. Never
 * `process.env`: the developer's `.env` or shell would change what every spec runs with.
 * DATA_DIR's default, `./.data`, is the developer's own data (the embedded Postgres, the master
 * key, datasets): a spec that forgot to give its own folder would read, write and remove there.
 * It gets a folder that names the mistake instead, under the run's temporary folder.
 */
const TEST_ENVIRONMENT = {
  NODE_ENV: 'test',
  DATA_DIR: join(tmpdir(), 'testConfig-dataDir-not-set'),
};

let defaults: AppConfig | undefined;

/**
 * The config the service would load with no variable set (NODE_ENV=test), with `overrides`
 * merged in: plain objects field by field, anything else (arrays, class instances, functions,
 * dates) replaced whole. A setting added to AppConfig is then its real default in every spec,
 * not `undefined`. Pure: it reads no file and opens no connection (unit specs may open none).
 */
export function testConfig(overrides: ConfigOverrides<AppConfig> = {}): AppConfig {
  defaults ??= loadConfig(TEST_ENVIRONMENT);
  // A copy each time: a service that changes its config must not change the next test's. Not
  // structuredClone: in jest's sandbox its objects are the host's, of another Object and Array.
  return merged(copied(defaults), overrides);
}

/**
 * A subtensor node at `url` as SUBTENSOR_URL=url alone gives it (its sync interval and timeout
 * the defaults): `network.subtensor` is unset by default, so an override gives it whole.
 */
export function subtensorAt(url: string): SubtensorConfig {
  return loadConfig({ ...TEST_ENVIRONMENT, SUBTENSOR_URL: url }).network.subtensor!;
}

function merged<T extends object>(base: T, overrides: ConfigOverrides<T>): T {
  const result = { ...base } as Record<string, unknown>;
  for (const [name, value] of Object.entries(overrides)) {
    const current = result[name];
    if (value === undefined && current !== undefined)
      throw new Error(
        `testConfig: ${name} is given as undefined over its default ${JSON.stringify(current)} ` +
          '(the type check lets undefined through for any field): leave it out, or give a value',
      );
    result[name] = isPlainObject(value) && isPlainObject(current) ? merged(current, value) : value;
  }
  return result as T;
}

function copied<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copied) as T;
  if (isPlainObject(value))
    return Object.fromEntries(
      Object.entries(value).map(([name, field]) => [name, copied(field)]),
    ) as T;
  return value;
}

/** An object literal's (of any realm), not a class instance's, an array's or a function's. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === null || Object.getPrototypeOf(prototype) === null;
}
