/**
 * Servers on this run's database and on the other one, for round trips between them: SQLite
 * when the run is on PostgreSQL (`STRATUS_TEST_DATABASE_URL`), and PostgreSQL from a SQLite run
 * when `STRATUS_TEST_OTHER_DATABASE_URL` names one.
 */
import { startTestServer, type TestServer, type TestServerOptions } from './server.ts';

/** The database URLs to start on: this run's (undefined: SQLite) first, then the other one when there is one. */
export function bothDatabases(): (string | undefined)[] {
  const pg = process.env.STRATUS_TEST_DATABASE_URL;
  return pg ? [pg, undefined] : [undefined, ...(process.env.STRATUS_TEST_OTHER_DATABASE_URL ? [process.env.STRATUS_TEST_OTHER_DATABASE_URL] : [])];
}

/** Starts a test server on database `url` (undefined: SQLite), whatever this run's database is. */
export async function startTestServerOn(url: string | undefined, opts: TestServerOptions = {}): Promise<TestServer> {
  const pg = process.env.STRATUS_TEST_DATABASE_URL;
  if (url) process.env.STRATUS_TEST_DATABASE_URL = url;
  else delete process.env.STRATUS_TEST_DATABASE_URL;
  try {
    return await startTestServer(opts);
  } finally {
    if (pg) process.env.STRATUS_TEST_DATABASE_URL = pg;
    else delete process.env.STRATUS_TEST_DATABASE_URL;
  }
}
