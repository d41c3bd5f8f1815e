// The platform's operations, for the journal's `unserved_operation` warning: which operation of the
// platform a request that no codehost route serves was meant for. The list is the generated map of
// @octokit/plugin-rest-endpoint-methods (`dist-src/generated/endpoints.js`: scope → method name →
// ["METHOD /url/{template}", …]), loaded once, on the first unserved request.
import { withoutApiPrefix } from '../platform/urls.ts';

export interface PlatformOperation {
  /** `issues/create-comment`: the scope and the method name in kebab case, as the platform's operation ids. */
  id: string;
  method: string;
  /** The URL template, e.g. `/repos/{owner}/{repo}/issues/{issue_number}/comments`. */
  template: string;
}

interface Matcher extends PlatformOperation {
  pattern: RegExp;
  /** Literal characters in the template: the most specific template wins (`/user/repos` over `/users/{username}`). */
  literal: number;
}

let loaded: Promise<Map<string, Matcher[]>> | null = null;

const kebab = (name: string) => name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
const escape = (text: string) => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&');

async function load(): Promise<Map<string, Matcher[]>> {
  const index = import.meta.resolve('@octokit/plugin-rest-endpoint-methods');
  // The package's exports name only its entry: its generated map is loaded as the file it is.
  const url = new URL('./generated/endpoints.js', index);
  const endpoints = (await import(url.href) as { default: Record<string, Record<string, [string, unknown?, { renamed?: unknown }?]>> }).default;
  const byMethod = new Map<string, Matcher[]>();
  for (const [scope, methods] of Object.entries(endpoints)) {
    for (const [name, [route, , decorations]] of Object.entries(methods)) {
      if (decorations?.renamed) continue;
      const [method, template] = route.split(' ') as [string, string];
      const pattern = new RegExp(`^${template.split(/\{[^}]+\}/).map(escape).join('[^/]+')}$`);
      const matcher = { id: `${scope}/${kebab(name)}`, method, template, pattern, literal: template.replace(/\{[^}]+\}/g, '').length };
      let list = byMethod.get(method);
      if (!list) byMethod.set(method, (list = []));
      list.push(matcher);
    }
  }
  for (const list of byMethod.values()) list.sort((a, b) => b.literal - a.literal);
  return byMethod;
}

/** The platform's operation for `method` and `path` (codehost's API prefix `/api/v3` stripped), or null when the platform has none. */
export async function platformOperation(method: string, path: string): Promise<PlatformOperation | null> {
  loaded ??= load().catch((error: unknown) => {
    loaded = null;
    throw error;
  });
  const list = (await loaded).get(method.toUpperCase()) ?? [];
  const bare = withoutApiPrefix(path).replace(/\/+$/, '') || '/';
  const found = list.find((operation) => operation.pattern.test(bare));
  return found ? { id: found.id, method: found.method, template: found.template } : null;
}
