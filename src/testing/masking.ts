// Masking for the request journal: no token, secret, key or signature is ever kept whole, in a
// header, a query, a body or a text; a secret seen in a request is masked wherever else the entry
// holds it (an answer echoing it, a header of another name).

/** The most of a request's or an answer's body an entry keeps (characters). */
export const BODY_LIMIT = 16 * 1024;
const MASK = '[masked]';

/** Keys whose values are secrets, wherever they appear (bodies, queries). */
const SECRET_KEY = /token|secret|password|private_key|key$|signature|^sig$|credential|^code$/i;
/** A token shown by its last four characters only, as the platform's settings pages do. */
const lastFour = (secret: string) => (secret.length > 12 ? `${MASK}…${secret.slice(-4)}` : MASK);
/** A name of a field or parameter that holds a secret, inside a text (JSON, YAML, a query or a form). */
const SECRET_NAME = '[A-Za-z_]*(?:token|secret|password|private_key|signature)[A-Za-z_]*';

/**
 * The secrets one journal entry has seen (every value masked in its request), so that the same value
 * is masked wherever else it appears in the entry: in an answer, a header of another name, a text.
 */
export type Seen = Set<string>;

/** Keeps `secret` in `seen` (when it is long enough to be told apart from ordinary text) and masks it. */
function masked(secret: string, seen: Seen | undefined, mask: (secret: string) => string = lastFour): string {
  if (seen && secret.length >= 8 && secret !== MASK) seen.add(secret);
  return mask(secret);
}

/**
 * Secrets inside any text: tokens of every kind (`chp_…`, `chpat_…`, `cho_…`), JWTs, PEM blocks, a
 * signed URL's signature or a secret in a query string or a form body, a JSON secret field in a
 * body too long to parse (cut at BODY_LIMIT), and a YAML one (a seed file's `client_secret:` or a
 * webhook's `secret:`, plain, quoted, in flow style or as a block).
 */
const SECRET_TEXT: [RegExp, (seen: Seen | undefined, match: string, ...groups: string[]) => string][] = [
  [/\bch[a-z]{1,4}_[A-Za-z0-9_]{8,}/g, (seen, match) => masked(match, seen)],
  [/\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g, (seen, match) => masked(match, seen)],
  [/-----BEGIN [A-Z ]+-----[\s\S]*?(?:-----END [A-Z ]+-----|$)/g, () => MASK],
  [new RegExp(`((?:^|[?&])(?:${SECRET_NAME}|sig|code)=)([^&#"\\s]*)`, 'gi'), (seen, _match, prefix, value) => `${prefix}${masked(decodeQuietly(value!), seen, () => MASK)}`],
  [new RegExp(`("${SECRET_NAME}"\\s*:\\s*")((?:[^"\\\\]|\\\\.)*)"?`, 'gi'), (seen, _match, prefix, value) => `${prefix}${masked(value!, seen, () => MASK)}"`],
  // YAML: `key: |` and the more indented lines below it; `key: "…"`, `key: '…'`; `key: value` up to
  // the end of the line, or to `,`/`}` in flow style.
  [new RegExp(`((?:^|[\\s{,])["']?${SECRET_NAME}["']?[ \\t]*:[ \\t]*)([|>][-+]?[ \\t]*(?:\\n[ \\t]+[^\\n]*)+|"(?:[^"\\\\\\n]|\\\\.)*"?|'[^'\\n]*'?|[^\\s,}\\]#"'][^,}\\]\\n#]*)`, 'gi'), (seen, _match, prefix, value) => {
    const quote = /^["']/.exec(value!)?.[0] ?? '';
    const inner = value!.replace(/^[|>][-+]?[ \t]*\n/, '').replace(/^["']|["']$/g, '').trim();
    for (const line of inner.split('\n')) masked(line.trim(), seen);
    return `${prefix}${quote}${MASK}${quote}`;
  }],
];

function decodeQuietly(value: string): string {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '));
  } catch {
    return value;
  }
}

/** One pass that every text holding a secret of SECRET_TEXT matches (a superset): most texts hold none. */
const MAY_HOLD_SECRET = /ch[a-z]{1,4}_|eyJ|-----BEGIN |(?:^|[?&])(?:sig|code)=|(?:token|secret|password|private_key|signature)[A-Za-z_]*["']?\s*[:=]/i;

function maskText(text: string, seen?: Seen): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  let out = text;
  for (const [pattern, replace] of SECRET_TEXT) out = out.replace(pattern, (...args: unknown[]) => replace(seen, ...(args.filter((arg) => typeof arg === 'string') as [string, ...string[]])));
  return out;
}

export function maskValue(value: unknown, seen?: Seen, depth = 0): unknown {
  if (typeof value === 'string') return maskText(value, seen);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 32) return MASK;
  if (Array.isArray(value)) return value.map((item) => maskValue(item, seen, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = SECRET_KEY.test(key) && item !== null && typeof item !== 'boolean' && typeof item !== 'number' && !(key === 'token_last_eight')
      ? (typeof item === 'string' ? masked(item, seen) : MASK)
      : maskValue(item, seen, depth + 1);
  }
  return out;
}

/** An Authorization value: a scheme and a credential, Basic's user kept (masked as text) and its password masked; a value with no scheme is a credential whole. */
function maskAuthorization(value: string, seen?: Seen): string {
  const parts = value.trim().split(/\s+/);
  if (parts.length < 2) return masked(value.trim(), seen);
  const [scheme, ...rest] = parts;
  const credential = rest.join(' ');
  if (/^basic$/i.test(scheme!)) {
    const decoded = Buffer.from(credential, 'base64').toString('utf8');
    masked(credential, seen);
    const colon = decoded.indexOf(':');
    if (colon >= 0) masked(decoded.slice(colon + 1), seen);
    return `${scheme} ${colon < 0 ? MASK : `${maskText(decoded.slice(0, colon), seen)}:${MASK}`}`;
  }
  return `${scheme} ${masked(credential, seen)}`;
}

export function maskHeaders(headers: Record<string, unknown>, seen?: Seen): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined) continue;
    if (lower === 'authorization' || lower === 'proxy-authorization') out[lower] = maskAuthorization(String(value), seen);
    else if (lower === 'cookie' || lower === 'set-cookie' || lower.includes('signature') || lower.includes('secret') || lower.includes('token')) {
      for (const item of [value].flat()) masked(String(item), seen);
      out[lower] = MASK;
    } else out[lower] = Array.isArray(value) ? value.map((item) => maskText(String(item), seen)) : maskText(String(value), seen);
  }
  return out;
}

/** Every secret of `seen` that is still in `value` (an answer echoing a request's secret, say), masked. */
export function maskSeen(value: unknown, seen: Seen, depth = 0): unknown {
  if (seen.size === 0) return value;
  if (typeof value === 'string') {
    let out = value;
    for (const secret of seen) if (out.includes(secret)) out = out.replaceAll(secret, MASK);
    return out;
  }
  if (value === null || typeof value !== 'object' || depth > 32) return value;
  if (Array.isArray(value)) return value.map((item) => maskSeen(item, seen, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskSeen(item, seen, depth + 1)]));
}

/** A body as kept: JSON parsed and masked, other text masked and cut at BODY_LIMIT. */
export function keptBody(body: unknown, seen?: Seen): unknown {
  if (body === undefined || body === null || body === '') return null;
  if (Buffer.isBuffer(body)) return `(${body.length} bytes)`;
  if (typeof body === 'object' && typeof (body as { pipe?: unknown }).pipe === 'function') return '(a stream)';
  // Too long to keep whole: cut first (a list of thousands is not parsed for the journal), then masked.
  if (typeof body === 'string' && body.length > BODY_LIMIT) return `${maskText(body.slice(0, BODY_LIMIT), seen)}… (${body.length - BODY_LIMIT} more characters)`;
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      value = body;
    }
  }
  const maskedValue = maskValue(value, seen);
  // A text within BODY_LIMIT is kept whole once masked, without serializing it again to measure it:
  // masking lengthens it at most twofold (a secret field's `[]` becomes `"[masked]"`), so still bounded.
  if (typeof body === 'string') return maskedValue;
  const text = typeof maskedValue === 'string' ? maskedValue : JSON.stringify(maskedValue);
  if (text.length <= BODY_LIMIT) return maskedValue;
  return `${text.slice(0, BODY_LIMIT)}… (${text.length - BODY_LIMIT} more characters)`;
}

/** What an entry keeps of a request and its answer, masked. */
export interface MaskedParts {
  query: Record<string, unknown>;
  request: { headers: Record<string, unknown>; body: unknown };
  response: { headers: Record<string, unknown>; body: unknown };
}

/**
 * One journal entry's request and answer as kept (journal.ts `record`): the request first, so that
 * every secret it held (and each of `known`, the server's own) is masked in the answer too, then
 * whatever of them is still anywhere in the entry.
 */
export function maskedParts(
  known: readonly string[],
  parts: { query: Record<string, unknown>; requestHeaders: Record<string, unknown>; requestBody: unknown; responseHeaders: Record<string, unknown>; responseBody: unknown },
): { seen: Seen; parts: MaskedParts } {
  const seen: Seen = new Set(known);
  const request = { headers: maskHeaders(parts.requestHeaders, seen), body: keptBody(parts.requestBody, seen) };
  const query = maskValue(parts.query, seen) as Record<string, unknown>;
  const response = { headers: maskHeaders(parts.responseHeaders, seen), body: keptBody(parts.responseBody, seen) };
  return { seen, parts: maskSeen({ query, request, response }, seen) as MaskedParts };
}
