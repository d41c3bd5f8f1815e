// `@login` and `@org/team` mentions in an issue or comment body. Code (fenced blocks and inline
// spans) is not prose, so mentions in it do not count; nor do e-mail addresses (`a@b.c`). As on the
// platform, a body notifies at most 50 users and 50 teams (the first ones): a long body cannot make
// one write look up thousands of names.
export interface Mentions {
  /** Lower-cased logins, each once, in order of appearance. */
  logins: string[];
  /** Lower-cased `org` and team `slug`, each pair once. */
  teams: { org: string; slug: string }[];
}

const CODE = /```[\s\S]*?(?:```|$)|`[^`\n]*`/g;
const MENTION = /(?<![A-Za-z0-9_`@/.-])@([A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38})(?:\/([A-Za-z0-9][A-Za-z0-9_-]*))?/g;

export const MENTION_LIMIT = 50;

export function parseMentions(body: string | null | undefined): Mentions {
  const logins = new Set<string>();
  const teams = new Map<string, { org: string; slug: string }>();
  for (const match of (body ?? '').replace(CODE, ' ').matchAll(MENTION)) {
    const login = match[1]!.toLowerCase();
    const slug = match[2]?.toLowerCase();
    if (slug) {
      if (teams.size < MENTION_LIMIT) teams.set(`${login}/${slug}`, { org: login, slug });
    } else if (logins.size < MENTION_LIMIT) logins.add(login);
  }
  return { logins: [...logins], teams: [...teams.values()] };
}
