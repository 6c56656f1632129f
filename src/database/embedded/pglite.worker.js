'use strict';
// Runs PGlite and its wire-protocol socket server off the main thread, so a long query
// cannot block the service's event loop (shared/notes/embedded-database.md).
// Plain CommonJS on purpose: a worker thread loads it directly, under ts-jest as in dist.
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require('@electric-sql/pglite');
const { PGLiteSocketServer } = require('@electric-sql/pglite-socket');

async function main() {
  const db = await PGlite.create(workerData.pgdataDir);
  const server = new PGLiteSocketServer({
    db,
    host: '127.0.0.1',
    port: 0,
    maxConnections: workerData.maxConnections,
  });
  await server.start();
  const port = Number(server.getServerConn().split(':').pop());
  parentPort.on('message', (message) => {
    if (message && message.type === 'stop') {
      server
        .stop()
        .then(() => db.close())
        .then(
          () => parentPort.postMessage({ type: 'stopped' }),
          (error) => parentPort.postMessage({ type: 'stopped', error: String(error) }),
        );
    }
  });
  parentPort.postMessage({ type: 'ready', port });
}

main().catch((error) => {
  parentPort.postMessage({ type: 'error', message: error && error.stack ? error.stack : String(error) });
});
