// The vendor word: the spec writes `Vendor` where the platform writes its own name, in header names
// (`X-Vendor-Event`, `X-Vendor-Request-Id`, `X-Vendor-Api-Version`, `X-Accepted-Vendor-Permissions`),
// the hookshot's `User-Agent` and the media type. Receivers of the ecosystem (Probot,
// @octokit/webhooks' middleware) read the platform's own word and answer 400 without it, so one
// setting (CODEHOST_VENDOR_WORD) names the word for everything that carries it; requests may always
// use the spec's `Vendor` as well.

/** Every name that carries the vendor word, for one word. Header names are lowercase, as Node keeps them. */
export interface VendorNames {
  /** The word as set (`Vendor`, `GitHub`). */
  word: string;
  /** `X-<Word>-Request-Id`, `X-<Word>-Media-Type` and its value `<word>.v3; format=json`. */
  requestId: string;
  mediaType: string;
  mediaTypeValue: string;
  /** The request headers that name an API version, the word's first (with `Vendor`, one). */
  apiVersion: readonly string[];
  /** `X-<Word>-Api-Version-Selected`. */
  apiVersionSelected: string;
  /** `X-Accepted-<Word>-Permissions`. */
  acceptedPermissions: string;
  /** `<Word>-Hookshot`, the deliveries' `User-Agent` before the release's short id. */
  hookshot: string;
  /** The delivery headers: `X-<Word>-Delivery`, `-Event`, `-Hook-ID`, `-Hook-Installation-Target-ID` and `-Type`. */
  delivery: { guid: string; event: string; hookId: string; targetId: string; targetType: string };
  /** The headers as a browser sees them (CORS lists), in their written case. */
  written: { apiVersion: readonly string[]; exposed: readonly string[] };
}

/** The spec's own word. */
export const SPEC_VENDOR_WORD = 'Vendor';

export function vendorNames(word: string): VendorNames {
  const lower = word.toLowerCase();
  const x = (rest: string) => `x-${lower}-${rest}`;
  const versions = [...new Set([`X-${word}-Api-Version`, `X-${SPEC_VENDOR_WORD}-Api-Version`])];
  return {
    word,
    requestId: x('request-id'),
    mediaType: x('media-type'),
    mediaTypeValue: `${lower}.v3; format=json`,
    apiVersion: versions.map((name) => name.toLowerCase()),
    apiVersionSelected: x('api-version-selected'),
    acceptedPermissions: `x-accepted-${lower}-permissions`,
    hookshot: `${word}-Hookshot`,
    delivery: { guid: x('delivery'), event: x('event'), hookId: x('hook-id'), targetId: x('hook-installation-target-id'), targetType: x('hook-installation-target-type') },
    written: {
      apiVersion: versions,
      exposed: [`X-${word}-Request-Id`, `X-${word}-Media-Type`, `X-${word}-Api-Version-Selected`, `X-Accepted-${word}-Permissions`],
    },
  };
}

/** The API version a request names (the word's header, else the spec's), or undefined. */
export function requestedApiVersion(names: VendorNames, headers: Record<string, string | string[] | undefined>): string | string[] | undefined {
  for (const name of names.apiVersion) {
    const value = headers[name];
    if (value !== undefined) return value;
  }
  return undefined;
}
