import { ConfigError, loadConfig } from './load-config';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('loadConfig', () => {
  it('starts in development with no variables at all', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      nodeEnv: 'development',
      port: 3000,
      netuid: 13,
      databaseUrl: undefined,
      redisUrl: undefined,
      redisKeyPrefix: 'gateway:',
    });
    expect(config.rateLimits).toEqual({
      regularPerWindow: 100,
      validatorPerWindow: 1000,
      windowSeconds: 3600,
    });
  });

  it('refuses production without a master key, a database or a hotkey, naming each', () => {
    expect(problemsOf({ NODE_ENV: 'production' })).toEqual([
      'MASTER_KEY: required when NODE_ENV=production',
      'DATABASE_URL: required when NODE_ENV=production',
      'VALIDATOR_HOTKEY: required when NODE_ENV=production',
    ]);
  });

  it('reports every malformed variable at once', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      DATABASE_URL: 'mysql://x',
      RATE_LIMIT_REGULAR: '0',
      MASTER_KEY: 'short',
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^PORT: /),
        'DATABASE_URL: must be a postgres:// or postgresql:// URL',
        expect.stringMatching(/^RATE_LIMIT_REGULAR: /),
        'MASTER_KEY: must be at least 16 characters (use a long random value)',
      ]),
    );
  });

  it('reads numbers and lists from their string form', () => {
    const config = loadConfig({
      PORT: '8080',
      RATE_LIMIT_REGULAR: '5',
      CORS_ORIGINS: 'https://a.example, https://b.example',
    });
    expect(config.port).toBe(8080);
    expect(config.rateLimits.regularPerWindow).toBe(5);
    expect(config.corsOrigins).toEqual(['https://a.example', 'https://b.example']);
  });
});
