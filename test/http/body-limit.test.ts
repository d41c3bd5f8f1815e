// A body over the 5 MB limit is answered with the platform's 413 JSON, and the client that keeps
// sending it (a reverse proxy sends the whole body it buffered, whatever the answer) gets that
// answer, never a reset: codehost reads and discards the rest of the body, up to a bound, before it
// closes. Without that, nginx in front of codehost answered 502 now and then (test/deploy/reverse-proxy.test.ts).
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;

before(async () => {
  server = await startServer();
});
after(() => server.close());

interface Sent {
  /** The raw response text (status line, headers, body) as far as it came. */
  response: string;
  /** How many body bytes the client handed its socket before the end (all of them, unless closed). */
  written: number;
  /** The socket error the client met, if any (ECONNRESET, EPIPE). */
  error?: string;
}

/**
 * Sends a request with a `size`-byte JSON body in `chunk`-byte writes, `pauseMs` apart (a slow
 * sender, as nginx passing on a buffered body), and keeps sending whatever the server answers.
 */
function sendSlowly(size: number, options: { chunk?: number; pauseMs?: number; contentLength?: boolean } = {}): Promise<Sent> {
  const { chunk = 256 * 1024, pauseMs = 5, contentLength = true } = options;
  const url = new URL(server.url);
  const head = [
    'POST /_admin/users HTTP/1.1',
    `Host: ${url.host}`,
    `Authorization: Bearer ${ADMIN_TOKEN}`,
    'Content-Type: application/json',
    'Accept: application/json',
    contentLength ? `Content-Length: ${size}` : 'Transfer-Encoding: chunked',
    '', '',
  ].join('\r\n');
  const prefix = '{"login":"big","name":"';
  const body = Buffer.alloc(size, 'x');
  body.write(prefix);
  body.write('"}', size - 2);
  return new Promise((resolve) => {
    const socket: Socket = connect(Number(url.port), url.hostname);
    let response = '';
    let written = 0;
    let error: string | undefined;
    let done = false;
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => (response += text));
    socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
    socket.on('close', () => {
      done = true;
      resolve({ response, written, error });
    });
    socket.write(head);
    const next = () => {
      if (done || socket.destroyed) return;
      if (written >= size) {
        if (!contentLength) socket.write('0\r\n\r\n');
        socket.end();
        return;
      }
      const piece = body.subarray(written, written + chunk);
      written += piece.length;
      // As a real sender: the next piece once the socket has taken this one (without waiting for
      // 'drain', 40 MB were queued in the client before the server's close could stop it).
      const taken = socket.write(contentLength ? piece : Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]));
      if (taken) setTimeout(next, pauseMs);
      else socket.once('drain', () => setTimeout(next, pauseMs));
    };
    socket.once('connect', next);
  });
}

function assert413(sent: Sent) {
  assert.equal(sent.error, undefined, `the client met ${sent.error} after ${sent.written} bytes; it read: ${sent.response.slice(0, 200)}`);
  assert.match(sent.response, /^HTTP\/1\.1 413 /);
  assert.match(sent.response, /content-type: application\/json/i);
  const json = JSON.parse(sent.response.slice(sent.response.indexOf('\r\n\r\n') + 4)) as { message: string };
  assert.equal(json.message, 'Payload Too Large');
}

test('a client that keeps sending a 5.5 MB body (Content-Length) gets the 413 JSON, not a reset', async () => {
  const sent = await sendSlowly(5.5 * 1024 * 1024);
  assert413(sent);
  assert.equal(sent.written, 5.5 * 1024 * 1024, 'the whole body was written');
});

test('a chunked 5.5 MB body (no Content-Length) gets the 413 JSON, not a reset', async () => {
  const sent = await sendSlowly(5.5 * 1024 * 1024, { contentLength: false });
  assert413(sent);
});

test('a body far over the limit is not read without end: the connection closes after the bound', async () => {
  // 40 MB, over the bound of what codehost discards: the client gets the 413 first, then a close.
  const sent = await sendSlowly(40 * 1024 * 1024, { chunk: 1024 * 1024, pauseMs: 1 });
  assert.match(sent.response, /^HTTP\/1\.1 413 /);
  assert.ok(sent.written < 40 * 1024 * 1024, `${sent.written} bytes written`);
});

test('a small body on the same server still goes through', async () => {
  const created = await server.adminRaw('POST', '/users', { login: 'small' });
  assert.equal(created.status, 201, created.text);
});
