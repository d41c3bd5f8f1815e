// The two bases every absolute URL is built from, and the opaque node ids of every representation.

export interface Urls {
  api: string;
  web: string;
}

/** A request path without the API's prefix (`/api/v3/user` → `/user`; `/api/v3` → ``): the path as the platform names it. */
export function withoutApiPrefix(path: string): string {
  return path.replace(/^\/api\/v3(?=\/|$)/, '');
}

/** The server's own reference (the interactive one at /docs), beside the API: under the public URL, `/api/v3` taken off. */
export function referenceUrl(urls: Urls): string {
  return `${urls.api.replace(/\/api\/v3$/, '')}/docs`;
}

/** Opaque, stable node ids: a type tag and the integer id, base64-encoded. */
export function nodeId(type: string, id: number): string {
  return Buffer.from(`0:${type}${id}`).toString('base64url').replace(/=+$/, '');
}
