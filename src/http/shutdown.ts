// A graceful stop of the HTTP server with keep-alive clients. Node's server.close() destroys idle
// keep-alive connections at once; a client may be sending its next request on one at that moment,
// and that request, already sent, fails with ECONNRESET. Instead: no new connections; every response
// from now on says `Connection: close` (the client opens a new connection for its next request, which
// is refused); a connection idle when the stop begins gets a short grace in which a request already
// on its way is still answered, then it is closed. The server is made by Fastify's serverFactory, so
// Node's close() finds this class's closeIdleConnections: nothing is reassigned at run time.
import { Server as HttpServer, type IncomingMessage, type RequestListener, type ServerOptions, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How long a connection idle at the stop stays open for a request already on its way (by default). */
export const IDLE_GRACE_MS = 500;

export class GracefulServer extends HttpServer {
  readonly #responses = new Map<Socket, Set<ServerResponse>>();
  #draining = false;
  #graceMs = IDLE_GRACE_MS;

  constructor(options: ServerOptions, handler: RequestListener) {
    super(options, handler);
    this.on('connection', (socket: Socket) => {
      this.#responses.set(socket, new Set());
      socket.once('close', () => this.#responses.delete(socket));
    });
    this.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const socket = request.socket;
      const open = this.#responses.get(socket) ?? new Set<ServerResponse>();
      this.#responses.set(socket, open);
      open.add(response);
      if (this.#draining && !response.headersSent) response.setHeader('connection', 'close');
      response.once('close', () => {
        open.delete(response);
        // An answer whose headers went out before the stop (so without `Connection: close`, a 413 whose
        // body is still being read among them) leaves its connection idle: closed after the grace too.
        if (this.#draining && !open.size) this.#closeWhenIdle(socket);
      });
    });
  }

  /** Node's close() calls this; the drain closes idle connections itself, after the grace. */
  override closeIdleConnections(): void {}

  /**
   * Starts the drain; the server's close() (Fastify's) then waits for the connections to end.
   * `graceMs`: how long an idle connection waits for a request on its way (the testing helper, whose
   * clients are on loopback in its own process, waits a few milliseconds).
   */
  drain(graceMs = IDLE_GRACE_MS): void {
    if (this.#draining) return;
    this.#draining = true;
    this.#graceMs = graceMs;
    for (const [socket, open] of this.#responses) {
      for (const response of open) if (!response.headersSent) response.setHeader('connection', 'close');
      if (!open.size) this.#closeWhenIdle(socket);
    }
  }

  #closeWhenIdle(socket: Socket): void {
    // After the grace, the check waits for the event loop's next poll (setImmediate): a request whose
    // bytes arrived meanwhile is read, and so answered, before the connection is closed.
    const timer = setTimeout(() => setImmediate(() => {
      if (!this.#responses.get(socket)?.size) socket.destroySoon();
    }).unref(), this.#graceMs);
    timer.unref();
  }
}
