import { testDatabaseServerUrl } from '../setup/test-env';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The embedded database's memory settings (docs/decisions.md "The embedded database's memory"):
 * PGlite's PostgreSQL runs with 16 MB of shared buffers and shared memory for 10 connections
 * instead of PostgreSQL's 128 MB and 100, in every start of the worker (a restart included). The
 * pass without DATABASE_URL runs it; PostgreSQL's settings are the operator's.
 */
const embeddedOnly = testDatabaseServerUrl() ? describe.skip : describe;

embeddedOnly('The embedded database starts with small shared memory', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  const settings = async () =>
    app.sql<{ name: string; setting: string; unit: string | null }>(
      `SELECT name, setting, unit FROM pg_settings WHERE name IN ('shared_buffers', 'max_connections') ORDER BY name`,
    );

  it('runs with 16 MB of shared buffers and 10 connections, after a restart too', async () => {
    const expected = [
      { name: 'max_connections', setting: '10', unit: null },
      // 2,048 buffers of 8 kB: 16 MB.
      { name: 'shared_buffers', setting: '2048', unit: '8kB' },
    ];
    expect(await settings()).toEqual(expected);
    await app.restart();
    expect(await settings()).toEqual(expected);
  });
});
