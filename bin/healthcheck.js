#!/usr/bin/env node
// The image's HEALTHCHECK (Containerfile): GET /readyz on this container's server (127.0.0.1, or the
// address CODEHOST_HOST names when it is not every address), exit 0 on a 200, 1 otherwise. Plain
// JavaScript on the pinned Node's fetch: the image has no curl.
const host = process.env.CODEHOST_HOST && !['0.0.0.0', '::'].includes(process.env.CODEHOST_HOST) ? process.env.CODEHOST_HOST : '127.0.0.1';
const port = process.env.CODEHOST_PORT || '3000';
const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/readyz`;
fetch(url, { signal: AbortSignal.timeout(4000) }).then(
  (response) => process.exit(response.status === 200 ? 0 : 1),
  () => process.exit(1),
);
