// `@login` and `@org/team` mentions in an issue or comment body. Code (fenced blocks and inline
// spans) is not prose, so mentions in it do not count; nor do e-mail addresses (`a@b.c`).
export interface Mentions {
  /** Lower-cased logins, each once, in order of appearance. */
  logins: string[];
  /** Lower-cased `org` and team `slug`, each pair once. */
  teams: { org: string; slug: string }[];
}

const CODE = /```[\s\S]*?(?:```|$)|`[^`\n]*`/g;
const MENTION = /(?<![A-Za-z0-9_`@/.-])@([A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38})(?:\/([A-Za-z0-9][A-Za-z0-9_-]*))?/g;

export function parseMentions(body: string | null | undefined): Mentions {
  const logins = new Set<string>();
  const teams = new Map<string, { org: string; slug: string }>();
  for (const match of (body ?? '').replace(CODE, ' ').matchAll(MENTION)) {
    const login = match[1]!.toLowerCase();
    const slug = match[2]?.toLowerCase();
    if (slug) teams.set(`${login}/${slug}`, { org: login, slug });
    else logins.add(login);
  }
  return { logins: [...logins], teams: [...teams.values()] };
}
