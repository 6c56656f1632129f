'use strict';
// Runs PGlite and its wire-protocol socket server off the main thread, so a long query
// cannot block the service's event loop (shared/notes/embedded-database.md).
// Plain CommonJS on purpose: a worker thread loads it directly, under ts-jest as in dist.
const { createHash, timingSafeEqual } = require('node:crypto');
const { readdirSync, readFileSync, statSync } = require('node:fs');
const { createServer } = require('node:net');
const { join } = require('node:path');
const { promisify } = require('node:util');
const { parentPort, workerData } = require('node:worker_threads');
const { constants, gzip: gzipCallback } = require('node:zlib');
const { PGlite } = require('@electric-sql/pglite');
const { PGLiteSocketHandler } = require('@electric-sql/pglite-socket');

const gzip = promisify(gzipCallback);

/**
 * PostgreSQL's memory inside PGlite's WebAssembly heap, which never shrinks (docs/decisions.md
 * "The embedded database's memory"). PGlite starts PostgreSQL with its defaults: 128 MB of
 * shared buffers and shared memory for 100 connections, all of it zeroed at the start, so
 * resident from the first second. PGlite runs one backend whose files the OS caches anyway:
 * 16 MB of buffers and 10 connections' worth took the resident heap from 158–166 to 34–42 MiB at
 * a CPU cost per upload, login and resume within the noise of the shared machine
 * (docs/benchmarks.md "Sizing and the embedded database's memory").
 */
const MEMORY_SETTINGS = ['shared_buffers=16MB', 'max_connections=10'];

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

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
/** A client must have sent its password within this, or it is disconnected. */
const AUTH_TIMEOUT_MS = 10_000;
const MAX_STARTUP_BYTES = 10_000;

/** An ErrorResponse of severity FATAL (the client is disconnected after it). */
function fatalMessage(code, message) {
  const fields = Buffer.concat(
    [
      ['S', 'FATAL'],
      ['V', 'FATAL'],
      ['C', code],
      ['M', message],
    ].map(([type, value]) => Buffer.concat([Buffer.from(type), Buffer.from(value, 'utf8'), Buffer.from([0])])),
  );
  const header = Buffer.alloc(5);
  header.write('E', 0);
  header.writeInt32BE(4 + fields.length + 1, 1);
  return Buffer.concat([header, fields, Buffer.from([0])]);
}

/** A simple Query message. */
function queryMessage(sql) {
  const text = Buffer.from(`${sql}\0`, 'utf8');
  const header = Buffer.alloc(5);
  header.write('Q', 0);
  header.writeInt32BE(4 + text.length, 1);
  return Buffer.concat([header, text]);
}

/** AuthenticationCleartextPassword. */
const ASK_PASSWORD = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3]);
/** Puts every run-time setting (search_path, timeouts, …) back to its default. */
const RESET_SESSION = queryMessage('RESET ALL');
/** The handler id of the resets: none of a client's, so they run between two transactions. */
const RESET_HANDLER = 0;

/** Frontend messages of the extended query protocol that leave a sequence open until Sync. */
const EXTENDED = new Set([0x50 /* P */, 0x42 /* B */, 0x44 /* D */, 0x45 /* E */, 0x43 /* C */, 0x48 /* H */]);
/** A Sync of our own: ends a sequence a client left open when it went. */
const SYNC_MESSAGE = Buffer.from([0x53 /* S */, 0, 0, 0, 4]);

/**
 * The order in which clients' messages reach PGlite's one session: docs/decisions.md "Embedded
 * database: one session, whole sequences". pglite-socket's own queue hands the session to another
 * client between any two messages unless a transaction block is open, so a client's Bind could meet
 * the unnamed statement another client had just parsed ("bind message supplies 1 parameters, but
 * prepared statement "" requires 2"), or a session reset in between destroy it. Here a client that
 * starts an extended-query sequence (Parse, Bind, Describe, Execute, Close, Flush) owns the session
 * until its Sync, and after that for as long as it holds a transaction block open; a simple Query
 * is one message and holds it only through an open block. Other clients' messages wait, in order.
 * A client that leaves while owning the session has its sequence ended (a Sync) and its transaction
 * rolled back before anyone else runs. Same interface as pglite-socket's queue (enqueue,
 * clearQueueForHandler, clearTransactionIfNeeded, getQueueLength), which PGLiteSocketHandler calls.
 */
class SequenceQueue {
  constructor(db) {
    this.db = db;
    this.queue = [];
    this.processing = false;
    /** The handler whose sequence or transaction is open, or null. */
    this.owner = null;
  }

  enqueue(handlerId, message, onData) {
    return new Promise((resolve, reject) => {
      this.queue.push({ handlerId, message, onData, resolve, reject });
      void this.process();
    });
  }

  next() {
    if (this.owner === null) return this.queue.shift() ?? null;
    const at = this.queue.findIndex((item) => item.handlerId === this.owner);
    return at < 0 ? null : this.queue.splice(at, 1)[0];
  }

  async process() {
    if (this.processing) return;
    this.processing = true;
    try {
      for (let item = this.next(); item !== null; item = this.next()) {
        if (item.message === null) {
          // The client left: what it left open is closed before anyone else runs.
          if (this.owner === item.handlerId) await this.end();
          item.resolve(0);
          continue;
        }
        let bytes = 0;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item.message, {
              onRawData: (data) => {
                bytes += data.length;
                item.onData(data);
              },
            }),
          );
        } catch (error) {
          item.reject(error);
          continue;
        }
        // After a Sync, a simple Query, a startup message or a session reset, the session stays
        // this client's only while a transaction block is open.
        const type = item.message.length > 0 ? item.message[0] : -1;
        this.owner = EXTENDED.has(type) || this.db.isInTransaction() ? item.handlerId : null;
        item.resolve(bytes);
      }
    } finally {
      this.processing = false;
    }
  }

  /** Ends the open sequence (a Sync) and rolls back the open transaction block, answers discarded. */
  async end() {
    const discard = { onRawData: () => undefined };
    await this.db
      .runExclusive(async () => {
        await this.db.execProtocolRawStream(SYNC_MESSAGE, discard);
        if (this.db.isInTransaction()) await this.db.execProtocolRawStream(queryMessage('ROLLBACK'), discard);
      })
      .catch(() => undefined);
    this.owner = null;
  }

  getQueueLength() {
    return this.queue.length;
  }

  clearQueueForHandler(handlerId) {
    this.queue = this.queue.filter((item) => {
      if (item.handlerId !== handlerId) return true;
      item.reject(new Error('Handler disconnected'));
      return false;
    });
  }

  /**
   * The client left: queued behind whatever of its own is running, so a message in flight when it
   * went cannot leave the session owned by nobody there.
   */
  clearTransactionIfNeeded(handlerId) {
    return new Promise((resolve) => {
      this.queue.push({ handlerId, message: null, onData: null, resolve, reject: resolve });
      void this.process();
    });
  }
}

/**
 * The wire front of the embedded database (docs/decisions.md "Embedded database: only the service
 * connects"). pglite-socket asks no password and runs every client on PGlite's one session, so any
 * local process could change the service's session (pg_dump empties search_path). Here a client
 * must first answer a password request with this start's random secret (compared in constant
 * time), else it gets FATAL 28P01 and is disconnected before a byte reaches PGlite. Only then is
 * its startup message handed to a pglite-socket handler on the shared query queue. The session's
 * settings are reset when a client connects and when it leaves, so what one client SET does not
 * outlive it.
 */
class AuthenticatedFront {
  constructor({ db, host, port, password, maxConnections }) {
    this.queryQueue = new SequenceQueue(db);
    this.secret = createHash('sha256').update(password).digest();
    this.host = host;
    this.port = port;
    this.maxConnections = maxConnections;
    this.handlers = new Set();
    this.pending = new Set();
    this.server = null;
    this.active = false;
  }

  start() {
    this.active = true;
    this.server = createServer((socket) => this.accept(socket));
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, this.host, () => {
        this.server.off('error', reject);
        resolve(this.server.address().port);
      });
    });
  }

  async stop() {
    this.active = false;
    for (const socket of this.pending) socket.destroy();
    this.pending.clear();
    const handlers = [...this.handlers];
    this.handlers.clear();
    await Promise.all(handlers.map((handler) => handler.detach(true)));
    if (this.server) await new Promise((resolve) => this.server.close(() => resolve()));
    this.server = null;
  }

  resetSession() {
    this.queryQueue.enqueue(RESET_HANDLER, RESET_SESSION, () => undefined).catch(() => undefined);
  }

  accept(socket) {
    socket.setNoDelay(true);
    if (!this.active) {
      socket.end(fatalMessage('57P03', 'the embedded database is stopping or starting again'));
      return;
    }
    if (this.handlers.size + this.pending.size >= this.maxConnections) {
      socket.end(fatalMessage('53300', 'too many connections to the embedded database'));
      return;
    }
    this.pending.add(socket);
    let buffer = Buffer.alloc(0);
    let startup = null;
    const refuse = (code, message) => {
      cleanUp();
      socket.end(fatalMessage(code, message));
    };
    const timer = setTimeout(() => refuse('08P01', 'no password within 10 s'), AUTH_TIMEOUT_MS);
    const cleanUp = () => {
      clearTimeout(timer);
      socket.off('data', onData);
      this.pending.delete(socket);
    };
    const onData = (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      while (startup === null && buffer.length >= 8) {
        const length = buffer.readInt32BE(0);
        const code = buffer.readInt32BE(4);
        if (length === 8 && (code === SSL_REQUEST || code === GSSENC_REQUEST)) {
          socket.write('N');
          buffer = buffer.subarray(8);
          continue;
        }
        if (code !== PROTOCOL_3 || length < 8 || length > MAX_STARTUP_BYTES) {
          // A CancelRequest too: PGlite has no backend to cancel.
          if (code === CANCEL_REQUEST) return (cleanUp(), socket.destroy());
          return refuse('08P01', 'unsupported startup message');
        }
        if (buffer.length < length) return;
        startup = Buffer.from(buffer.subarray(0, length));
        buffer = buffer.subarray(length);
        socket.write(ASK_PASSWORD);
      }
      if (startup === null || buffer.length < 5) return;
      const length = buffer.readInt32BE(1);
      if (buffer[0] !== 0x70 /* p */ || length < 5 || length > 1024)
        return refuse('28P01', 'password authentication failed');
      if (buffer.length < 1 + length) return;
      const given = buffer.subarray(5, 1 + length - 1); // without the closing NUL
      const rest = buffer.subarray(1 + length);
      if (!timingSafeEqual(createHash('sha256').update(given).digest(), this.secret))
        return refuse('28P01', 'password authentication failed');
      cleanUp();
      socket.pause();
      this.hand(socket, Buffer.concat([startup, rest]));
    };
    socket.on('data', onData);
    socket.on('error', () => {
      cleanUp();
      socket.destroy();
    });
    socket.on('close', cleanUp);
  }

  /** The client is authenticated: pglite-socket runs its startup message and everything after. */
  hand(socket, firstBytes) {
    if (!this.active) return socket.destroy();
    const handler = new PGLiteSocketHandler({ queryQueue: this.queryQueue, closeOnDetach: true });
    this.handlers.add(handler);
    const left = () => {
      if (!this.handlers.delete(handler)) return;
      // After pglite-socket's own clean-up of the handler (a ROLLBACK of its open transaction).
      setImmediate(() => this.resetSession());
    };
    handler.addEventListener('close', left);
    handler.addEventListener('error', left);
    this.resetSession();
    socket.unshift(firstBytes);
    handler.attach(socket).then(
      () => socket.resume(),
      () => {
        left();
        socket.destroy();
      },
    );
  }
}

async function main() {
  // A restore (embedded-restore.ts): the data dir is written from the backup's tar first.
  const db = await PGlite.create(workerData.pgdataDir, {
    startParams: [...PGlite.defaultStartParams, ...MEMORY_SETTINGS.flatMap((setting) => ['-c', setting])],
    ...(workerData.loadDataDir
      ? { loadDataDir: new Blob([workerData.loadDataDir], { type: 'application/x-tar' }) }
      : {}),
  });
  const server = new AuthenticatedFront({
    db,
    host: '127.0.0.1',
    port: workerData.port ?? 0,
    password: workerData.password,
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
  const port = await server.start();
  parentPort.on('message', (message) => {
    if (message && message.type === 'ping') parentPort.postMessage({ type: 'pong' });
    if (message && message.type === 'backup') {
      backup(db, () => failure, workerData.pgdataDir).then(
        (data) => parentPort.postMessage({ type: 'backup', id: message.id, data }, [data.buffer]),
        (error) =>
          parentPort.postMessage({
            type: 'backup',
            id: message.id,
            error: String(error && error.message ? error.message : error),
          }),
      );
    }
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

/**
 * The data dir as a gzipped tarball, in the layout PGlite's dumpDataDir writes and its loadDataDir
 * reads (embedded-restore.ts). The files are read under PGlite's query lock (runExclusive), so no
 * statement runs meanwhile: the copy is of one instant between two statements, what a file-system
 * snapshot of a running PostgreSQL is (its restore replays the WAL; a transaction still open at
 * that instant is not in it). PGlite runs no background writer, and its file system writes through
 * to these files. Only the reading holds the lock (native reads: PGlite's dumpDataDir builds its tar,
 * and its gzip, under the lock, and held statements 8 s and 42 s where this holds them 3.8 s at a
 * 642 MiB data dir); the tar and its compression (on libuv's threads) come after
 * (docs/benchmarks.md "Online backup of the embedded database").
 */
async function backup(db, failure, pgdataDir) {
  if (failure() !== null) throw new Error(`the embedded database has failed: ${failure()}`);
  const entries = await db.runExclusive(async () => readTree(pgdataDir));
  const gzipped = await gzip(tarOf(entries), { level: constants.Z_BEST_SPEED });
  return new Uint8Array(gzipped.buffer, gzipped.byteOffset, gzipped.byteLength);
}

/** Every directory and file under `root`, depth first, named "/relative/path" as PGlite names them. */
function readTree(root) {
  const entries = [];
  const walk = (relative) => {
    for (const name of readdirSync(join(root, relative)).sort()) {
      const path = `${relative}/${name}`;
      const stats = statSync(join(root, path));
      if (stats.isDirectory()) {
        entries.push({ name: path, mode: stats.mode & 0o777, mtime: stats.mtimeMs, data: null });
        walk(path);
      } else if (stats.isFile()) {
        entries.push({
          name: path,
          mode: stats.mode & 0o777,
          mtime: stats.mtimeMs,
          data: readFileSync(join(root, path)),
        });
      }
    }
  };
  walk('');
  return entries;
}

/** A ustar archive of the entries (names up to 255 bytes: a data dir's are short). */
function tarOf(entries) {
  const blocks = [];
  for (const entry of entries) {
    const header = Buffer.alloc(512);
    let name = entry.name;
    let prefix = '';
    if (Buffer.byteLength(name) > 100) {
      const cut = name.lastIndexOf('/', 155);
      prefix = name.slice(0, cut);
      name = name.slice(cut + 1);
    }
    const size = entry.data === null ? 0 : entry.data.length;
    header.write(name, 0, 100, 'utf8');
    header.write(`${entry.mode.toString(8).padStart(7, '0')}\0`, 100, 'latin1');
    header.write('0000000\0', 108, 'latin1');
    header.write('0000000\0', 116, 'latin1');
    header.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'latin1');
    header.write(
      `${Math.floor(entry.mtime / 1000)
        .toString(8)
        .padStart(11, '0')}\0`,
      136,
      'latin1',
    );
    header.write('        ', 148, 'latin1');
    header.write(entry.data === null ? '5' : '0', 156, 'latin1');
    header.write('ustar\x0000', 257, 'latin1');
    header.write(prefix, 345, 155, 'utf8');
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
    blocks.push(header);
    if (entry.data !== null && size > 0) {
      blocks.push(entry.data);
      if (size % 512 !== 0) blocks.push(Buffer.alloc(512 - (size % 512)));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

main().catch((error) => {
  parentPort.postMessage({ type: 'error', message: error && error.stack ? error.stack : String(error) });
});
