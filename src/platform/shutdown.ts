// A graceful stop of the HTTP server with keep-alive clients. Node's server.close() destroys idle
// keep-alive connections at once; a client may be sending its next request on one at that moment,
// and that request, already sent, fails with ECONNRESET. Instead: no new connections; every response
// from now on says `Connection: close` (the client opens a new connection for its next request, which
// is refused); a connection idle when the stop begins gets a short grace in which a request already
// on its way is still answered, then it is closed.
import type { Server as HttpServer, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How long a connection idle at the stop stays open for a request already on its way. */
const IDLE_GRACE_MS = 500;

export interface GracefulHttp {
  /** Starts the drain; the server's close() (Fastify's) then waits for the connections to end. */
  drain(): void;
}

export function gracefulHttp(server: HttpServer): GracefulHttp {
  const responses = new Map<Socket, Set<ServerResponse>>();
  let draining = false;

  const closeWhenIdle = (socket: Socket) => {
    const timer = setTimeout(() => {
      if (!responses.get(socket)?.size) socket.destroySoon();
    }, IDLE_GRACE_MS);
    timer.unref();
  };

  server.on('connection', (socket: Socket) => {
    responses.set(socket, new Set());
    socket.once('close', () => responses.delete(socket));
  });
  server.on('request', (request, response: ServerResponse) => {
    const socket = request.socket;
    const open = responses.get(socket) ?? new Set<ServerResponse>();
    responses.set(socket, open);
    open.add(response);
    if (draining && !response.headersSent) response.setHeader('connection', 'close');
    response.once('close', () => {
      open.delete(response);
      // An answer whose headers went out before the stop (so without `Connection: close`, a 413 whose
      // body is still being read among them) leaves its connection idle: closed after the grace too.
      if (draining && !open.size) closeWhenIdle(socket);
    });
  });

  // Node's close() calls this; the drain below closes idle connections itself, after the grace.
  server.closeIdleConnections = () => undefined;

  return {
    drain() {
      if (draining) return;
      draining = true;
      for (const [socket, open] of responses) {
        for (const response of open) if (!response.headersSent) response.setHeader('connection', 'close');
        if (!open.size) closeWhenIdle(socket);
      }
    },
  };
}
