"""PyGithub against codehost: every call PyGithub offers for the notifications and user migrations
areas, and the authenticated user, through PyGithub's own objects (so its URL checks, pagination and
response parsing are what is tested).

Usage: pygithub_check.py BASE_URL TOKEN REPOSITORY MIGRATED_REPOSITORY
  BASE_URL            the API root the server printed, e.g. http://127.0.0.1:3000/api/v3
  TOKEN               a classic token with notifications, repo and read:user of a user with more
                      than two unread threads, at least one on an issue and one on a pull request
  REPOSITORY          owner/name of a repository most threads are in (at least one is elsewhere)
  MIGRATED_REPOSITORY a repository of that user to export

Prints one JSON line per step, {"step", "ok", "detail"}, and exits 1 if a step failed. A failed step
does not stop the others (a step that needs an earlier one's result fails with it).
"""
import datetime
import gzip
import json
import sys
import time
import traceback
import urllib.request

from github import Github, GithubException

BASE_URL, TOKEN, REPOSITORY, MIGRATED = sys.argv[1:5]
failed = False
state = {}


def step(name):
    def run(check):
        global failed
        try:
            detail = check()
            print(json.dumps({"step": name, "ok": True, "detail": str(detail or "")}), flush=True)
        except Exception as error:  # every failure is reported, then the next step runs
            failed = True
            message = f"{type(error).__name__}: {error}"
            print(json.dumps({"step": name, "ok": False, "detail": message, "trace": traceback.format_exc()}), flush=True)
        return check

    return run


# Two threads a page, so the lists below span several pages that PyGithub follows by their Link.
gh = Github(base_url=BASE_URL, login_or_token=TOKEN, per_page=2)
one_page = Github(base_url=BASE_URL, login_or_token=TOKEN, per_page=100)
me = gh.get_user()


@step("user")
def _():
    assert me.login, "no login"
    assert me.url.startswith(BASE_URL + "/users/"), me.url
    state["login"] = me.login
    return f"{me.login} ({me.name}) {me.url}"


@step("notifications: list and follow the pages")
def _():
    threads = list(me.get_notifications())
    expected = one_page.get_user().get_notifications()
    expected_ids = [thread.id for thread in expected]
    ids = [thread.id for thread in threads]
    assert len(ids) > 2, f"only {len(ids)} threads: not several pages"
    assert ids == expected_ids, f"{ids} != one page of {expected_ids}"
    assert all(thread.unread for thread in threads)
    state["threads"] = threads
    return f"{len(ids)} threads over {(len(ids) + 1) // 2} pages"


@step("notifications: all=True")
def _():
    every = [thread.id for thread in me.get_notifications(all=True)]
    assert len(every) >= len(state["threads"]), every
    return f"{len(every)} threads"


@step("notifications: participating=True")
def _():
    participating = list(me.get_notifications(participating=True))
    assert all(thread.reason != "subscribed" for thread in participating)
    return f"{len(participating)} threads"


@step("notifications: since and before")
def _():
    future = datetime.datetime.utcnow() + datetime.timedelta(days=1)
    assert list(me.get_notifications(since=future)) == []
    before = list(me.get_notifications(before=future))
    assert len(before) == len(state["threads"]), len(before)
    return "since a day ahead: none; before: all"


@step("notifications: read a thread")
def _():
    first = state["threads"][0]
    thread = me.get_notification(first.id)
    assert thread.id == first.id
    assert thread.url.startswith(BASE_URL + "/notifications/threads/"), thread.url
    assert thread.repository.full_name == first.repository.full_name, thread.repository.full_name
    assert thread.repository.url.startswith(BASE_URL + "/repos/"), thread.repository.url
    assert thread.subject.title and thread.subject.type in ("Issue", "PullRequest"), thread.subject.type
    assert thread.reason and thread.unread and thread.updated_at
    return f"{thread.id} {thread.reason} {thread.subject.type} {thread.subject.title!r}"


@step("notifications: the thread's issue and pull request")
def _():
    threads = state["threads"]
    issue = next(thread for thread in threads if thread.subject.type == "Issue").get_issue()
    pull = next(thread for thread in threads if thread.subject.type == "PullRequest").get_pull_request()
    assert issue.number and issue.title and pull.number and pull.title
    return f"issue #{issue.number} {issue.title!r}, pull request #{pull.number} {pull.title!r}"


@step("notifications: mark a thread read")
def _():
    first = state["threads"][0]
    first.mark_as_read()
    assert me.get_notification(first.id).unread is False
    assert first.id not in [thread.id for thread in one_page.get_user().get_notifications()]
    return first.id


@step("notifications: a repository's threads")
def _():
    repository = gh.get_repo(REPOSITORY)
    assert repository.full_name == REPOSITORY
    unread = [thread.id for thread in repository.get_notifications()]
    expected = [thread.id for thread in state["threads"][1:] if thread.repository.full_name == REPOSITORY]
    assert unread == expected, f"{unread} != {expected}"
    return f"{len(unread)} unread in {REPOSITORY}"


@step("notifications: mark a repository's threads read")
def _():
    repository = gh.get_repo(REPOSITORY)
    repository.mark_notifications_as_read(datetime.datetime.utcnow() + datetime.timedelta(seconds=5))
    assert list(repository.get_notifications()) == []
    return "none unread"


@step("notifications: mark every thread read")
def _():
    assert list(me.get_notifications()), "no unread thread outside the repository to mark"
    me.mark_notifications_as_read(datetime.datetime.utcnow() + datetime.timedelta(seconds=5))
    assert list(me.get_notifications()) == []
    return "none unread"


@step("migrations: start one")
def _():
    migration = me.create_migration([MIGRATED], exclude_attachments=True)
    assert migration.id and migration.state in ("pending", "exporting", "exported"), migration.state
    assert [repository.full_name.split("/")[-1] for repository in migration.repositories] == [MIGRATED]
    assert migration.url.startswith(BASE_URL + "/user/migrations/"), migration.url
    state["migration"] = migration
    return f"{migration.id} {migration.state}"


@step("migrations: poll to exported")
def _():
    migration = state["migration"]
    deadline = time.time() + 60
    seen = []
    while True:
        status = migration.get_status()
        if not seen or seen[-1] != status:
            seen.append(status)
        if status == "exported":
            return " -> ".join(seen)
        assert status in ("pending", "exporting"), status
        assert time.time() < deadline, f"still {status} after 60 s"
        time.sleep(0.2)


@step("migrations: list")
def _():
    ids = [migration.id for migration in me.get_migrations()]
    assert state["migration"].id in ids, ids
    return ids


@step("migrations: archive URL and download")
def _():
    url = state["migration"].get_archive_url()
    assert isinstance(url, str) and url.startswith("http"), repr(url)
    with urllib.request.urlopen(url) as response:
        archive = response.read()
    assert archive[:2] == b"\x1f\x8b", archive[:2]
    gzip.decompress(archive)
    return f"{len(archive)} bytes from {url.split('?')[0]}"


@step("migrations: delete the archive")
def _():
    migration = state["migration"]
    migration.delete()
    try:
        migration.get_archive_url()
    except GithubException as error:
        assert error.status == 404, error.status
        return "then 404"
    raise AssertionError("the archive is still there")


@step("migrations: unlock a repository")
def _():
    locked = me.create_migration([MIGRATED], lock_repositories=True)
    deadline = time.time() + 60
    while locked.get_status() != "exported":
        assert time.time() < deadline, "not exported"
        time.sleep(0.2)
    locked.unlock_repo(MIGRATED)
    return f"migration {locked.id}"


@step("rate limit headers")
def _():
    remaining, limit = gh.rate_limiting
    assert 0 < remaining <= limit, (remaining, limit)
    assert gh.rate_limiting_resettime > time.time(), gh.rate_limiting_resettime
    return f"{remaining}/{limit}"


@step("rate limit: get_rate_limit()")
def _():
    # PyGithub 2.x answers an overview (`resources`, `rate`); 1.x the resources themselves.
    resources = lambda overview: getattr(overview, "resources", overview)
    before = resources(gh.get_rate_limit())
    again = gh.get_rate_limit()
    core = resources(again).core
    assert (core.limit, core.remaining) == (before.core.limit, before.core.remaining), "reading it uses none of the budget"
    assert 0 < core.remaining <= core.limit, (core.remaining, core.limit)
    reset = core.reset if core.reset.tzinfo else core.reset.replace(tzinfo=datetime.timezone.utc)
    assert reset.timestamp() > time.time(), core.reset
    if hasattr(again, "rate"):
        assert again.rate.remaining == core.remaining
    return f"{core.remaining}/{core.limit}"


sys.exit(1 if failed else 0)
