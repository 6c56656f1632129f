'use strict';
// Runs PGlite and its wire-protocol socket server off the main thread, so a long query
// cannot block the service's event loop (shared/notes/embedded-database.md).
// Plain CommonJS on purpose: a worker thread loads it directly, under ts-jest as in dist.
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require('@electric-sql/pglite');
const { PGLiteSocketServer } = require('@electric-sql/pglite-socket');

/** Error severities after which PGlite's one backend has exited: the next call into it never returns. */
const FATAL = new Set(['FATAL', 'PANIC']);

/**
 * Follows the backend's messages through the chunks PGlite writes (a message may span chunks) and
 * returns the first FATAL or PANIC error it sees, as "PANIC 53100: could not write …". Only error
 * messages are kept whole; the bodies of other messages (rows) are skipped, not buffered.
 */
class FatalErrorScan {
  constructor() {
    this.header = Buffer.alloc(0);
    this.skip = 0;
    this.error = null;
    this.errorFill = 0;
  }

  push(chunk) {
    let data = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (data.length > 0) {
      if (this.error !== null) {
        const take = Math.min(this.error.length - this.errorFill, data.length);
        data.copy(this.error, this.errorFill, 0, take);
        this.errorFill += take;
        data = data.subarray(take);
        if (this.errorFill === this.error.length) {
          const found = fatalOf(this.error);
          this.error = null;
          if (found) return found;
        }
        continue;
      }
      if (this.skip > 0) {
        const take = Math.min(this.skip, data.length);
        this.skip -= take;
        data = data.subarray(take);
        continue;
      }
      const need = 5 - this.header.length;
      this.header = Buffer.concat([this.header, data.subarray(0, need)]);
      data = data.subarray(Math.min(need, data.length));
      if (this.header.length < 5) break;
      const type = this.header[0];
      const bodyLength = this.header.readInt32BE(1) - 4;
      this.header = Buffer.alloc(0);
      if (bodyLength < 0) return null; // not the protocol any more: stop reading this call's output
      if (type === 0x45 /* E: ErrorResponse */ && bodyLength < 1 << 20) {
        this.error = Buffer.alloc(bodyLength);
        this.errorFill = 0;
        if (bodyLength === 0) this.error = null;
      } else {
        this.skip = bodyLength;
      }
    }
    return null;
  }
}

/** "PANIC 53100: message" when the ErrorResponse body is FATAL or PANIC, else null. */
function fatalOf(body) {
  const fields = {};
  for (let at = 0; at < body.length && body[at] !== 0;) {
    const end = body.indexOf(0, at + 1);
    if (end < 0) break;
    fields[String.fromCharCode(body[at])] = body.toString('utf8', at + 1, end);
    at = end + 1;
  }
  const severity = fields.V ?? fields.S;
  return FATAL.has(severity) ? `${severity} ${fields.C ?? ''}: ${fields.M ?? ''}` : null;
}

async function main() {
  const db = await PGlite.create(workerData.pgdataDir);
  const server = new PGLiteSocketServer({
    db,
    host: '127.0.0.1',
    port: workerData.port ?? 0,
    maxConnections: workerData.maxConnections,
  });
  let failure = null;
  const failed = (reason) => {
    if (failure !== null) return;
    failure = reason;
    parentPort.postMessage({ type: 'failed', reason });
    // Every client connection is closed: its calls fail at once instead of waiting for the answer
    // of a backend that has exited.
    setImmediate(() => void server.stop().catch(() => undefined));
  };
  // pglite-socket's queue stops for good when a call throws (electric-sql/pglite#1046), and a call
  // into a backend that has exited never returns: after a FATAL or PANIC nothing reaches PGlite again,
  // and this wrapper never throws.
  const exec = db.execProtocolRawStream.bind(db);
  db.execProtocolRawStream = async (message, options) => {
    if (failure !== null) return;
    const scan = new FatalErrorScan();
    try {
      await exec(message, {
        ...options,
        onRawData: (data) => {
          const fatal = failure === null ? scan.push(data) : null;
          options.onRawData(data);
          if (fatal) failed(fatal);
        },
      });
    } catch (error) {
      failed(`PGlite failed: ${error && error.stack ? error.stack : String(error)}`);
    }
  };
  await server.start();
  const port = Number(server.getServerConn().split(':').pop());
  parentPort.on('message', (message) => {
    if (message && message.type === 'ping') parentPort.postMessage({ type: 'pong' });
    if (message && message.type === 'stop') {
      server
        .stop()
        // A backend that has exited cannot be closed: the thread is ended instead.
        .then(() => (failure === null ? db.close() : undefined))
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
