// Skips that are not by design (a tool or privilege missing on this machine): a developer's run skips
// with the reason; a CI run (CI set, as .ci/run does) fails with it, so no test goes quietly unrun
// there. The skips by design (a PostgreSQL-only test on SQLite and the like) are listed by name in
// docs/testing-strategy.md and do not come through here.

/** `reason` as a skip, or false when there is none; with CI set, an error naming the reason. */
export function unavailable(reason: string | null | false): string | false {
  if (!reason) return false;
  if (process.env.CI) throw new Error(`cannot run on CI: ${reason}`);
  return reason;
}
