// A webhook receiver on a loopback port for the tests: it keeps every request it got (path,
// headers, body, arrival time) and answers 200 unless the test gives it another answer.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  /** The body as text (UTF-8). */
  body: string;
  /** The body's bytes exactly as they arrived (signatures are over these). */
  bytes: Buffer;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: any;
  at: number;
}

/** Answers a request the receiver got; the default answers 200 `ok`. */
export type Answer = (path: string, response: ServerResponse, receiver: Receiver) => void;

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export class Receiver {
  readonly received: Received[] = [];
  readonly server: Server;
  port = 0;

  constructor(answer: Answer = (_path, response) => void response.writeHead(200).end('ok')) {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = req.url ?? '';
        const bytes = Buffer.concat(chunks);
        const body = bytes.toString('utf8');
        this.received.push({ path, headers: req.headers, body, bytes, json: parsed(body), at: Date.now() });
        answer(path, res, this);
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  url(path: string, host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${path}`;
  }

  /** Requests received on a path, in order. */
  on(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
