// What `codehost help [COMMAND]` and `codehost COMMAND --help` print.

export const HELP: Record<string, string> = {
  main: `codehost: a self-hostable server for the code-hosting platform REST API

Usage: codehost <command> [options]

Commands:
  serve [--seed FILE]        start the API server (and its background worker)
  migrate                    apply pending database migrations and exit
  seed FILE                  load a YAML or JSON seed file and exit
  admin METHOD PATH [JSON]   call the admin API of a running server
  admin-token reset          store a new admin token and print it (the old one stops working)
  backup DIR                 copy the database, git data and archives into a new directory (online)
  replay FILE --to URL       post an app's recorded webhook deliveries to a loopback receiver, re-signed
  admin-token generate       print a new admin token for CODEHOST_ADMIN_TOKEN (stores nothing)
  secret-key generate        print a new key for CODEHOST_SECRET_KEY
  secret-key rotate          move the database to CODEHOST_NEW_SECRET_KEY (every process stopped)
  token generate --kind KIND print a new token (classic, fine_grained, oauth, app_user) for a seed file
  help [COMMAND]             this text, or a command's

Options: --help (also after a command), --version.
Configuration comes from CODEHOST_* environment variables and DATABASE_URL, and from a .env file
in the working directory if there is one (the environment wins); see the README.`,
  serve: `Usage: codehost serve [--seed FILE]

Starts the server on CODEHOST_HOST:CODEHOST_PORT. A new embedded database gets the demo data
unless CODEHOST_DEMO=0. --seed FILE loads a seed file at start (idempotent).
The admin token: CODEHOST_ADMIN_TOKEN while it is set; otherwise the stored one, generated and
printed by the first start that listens (\`codehost admin-token reset\` makes a new one).
SIGTERM or SIGINT (Ctrl-C): finish in-flight requests, stop the worker, close the database.`,
  migrate: `Usage: codehost migrate [--check]

Applies every pending migration to the configured database (DATABASE_URL, or the embedded
SQLite file under CODEHOST_DATA_DIR) and exits.
--check applies nothing: exit 0 when the database is up to date, else exit 1 with one line
naming the pending migrations (for a deployment pipeline).`,
  seed: `Usage: codehost seed FILE

Loads a YAML or JSON seed file (keys: users, enterprises, orgs, repos, teams, collaborators,
watching, tokens, apps, installations, authorizations, issues, comments, and the areas' keys). What exists is left
alone. Prints the one-time secrets of what it created.`,
  admin: `Usage: codehost admin METHOD PATH [JSON] [--follow]
       codehost admin users|orgs|repos|apps [--page N] [--per-page N]
       codehost admin tokens [LOGIN] [--page N] [--per-page N]
       codehost admin reset [empty|demo] | reset --seed FILE
       codehost admin snapshot save|restore|delete NAME | snapshot list
       codehost admin requests [count|clear|permissions-used] [--method M] [--path GLOB] [--operation ID]
                 [--login L] [--app SLUG] [--installation ID] [--token T] [--warning CODE]
                 [--status 404|4xx] [--since ID|TIME] [--per-page N] [--page N]

Calls the admin API of a running server: CODEHOST_URL (default http://127.0.0.1:$CODEHOST_PORT)
with CODEHOST_ADMIN_TOKEN. PATH is relative to /_admin.
--follow repeats a GET every second while the answer's state is pending or exporting, printing
each change, then prints the final answer (exit status 1 when it ends failed).
Examples:
  codehost admin POST /users '{"login":"alice"}'
  codehost admin POST /jobs/drain
  codehost admin GET /clock
  codehost admin GET /migrations/7 --follow
  codehost admin users --per-page 100      # GET /_admin/users?per_page=100
  codehost admin tokens alice              # alice's tokens (never their values)
  codehost admin reset demo                # back to the demo data (laptop mode; docs/testing.md)
  codehost admin snapshot save before-test
  codehost admin requests --status 4xx     # the journal: what the server refused`,
  backup: `Usage: codehost backup DIR

Backs up the configured server's data while it runs: the database (SQLite: a consistent copy made
with VACUUM INTO; PostgreSQL: pg_dump's custom format, codehost.pgdump), the git data and the finished
migration archives, into DIR (created, 0700, every file in it 0600; it must not exist). DIR is laid out as a data
directory: restore by copying it to an empty CODEHOST_DATA_DIR (and, for PostgreSQL, pg_restore of
codehost.pgdump into an empty database). See docs/backup.md.`,
  'admin-token': `Usage: codehost admin-token reset
       codehost admin-token generate

reset: generates a new admin token, stores its hash in the configured database (no server needs to
run) and prints it once. The previous stored token stops working at once, on running servers too.
While CODEHOST_ADMIN_TOKEN is set, that variable is the admin token and the stored one is not used.
generate: prints a new token (46 characters, 238 random bits) to set as CODEHOST_ADMIN_TOKEN (or
CODEHOST_METRICS_TOKEN); it stores nothing and touches no database.`,
  'secret-key': `Usage: codehost secret-key generate
       CODEHOST_NEW_SECRET_KEY=NEW codehost secret-key rotate

generate: prints a new key for CODEHOST_SECRET_KEY: 32 random bytes, base64url (43 characters). It
touches no database. Give every process of a database the same key, and keep it: the database
records the key's fingerprint, and a process with another key refuses to start.
rotate: moves the configured database from the key in force (CODEHOST_SECRET_KEY, or when it is
unset the key generated in the database) to CODEHOST_NEW_SECRET_KEY, in one transaction: every
sealed secret (the apps' webhook secrets) is opened with the old key and sealed with the new, and
the database records the new key's fingerprint. Stop every process first; then start them all with
CODEHOST_SECRET_KEY set to the new key (a process with the old key now refuses to start). Signed
URLs issued before (archive downloads, 5 minutes) stop working. Neither key is printed. See
docs/security.md, "Rotating the secret key".`,
  replay: `Usage: codehost replay FILE --to URL [--secret S]
       codehost replay --app SLUG [--since TIME] [--server URL] --to URL [--secret S]

Posts webhook deliveries, in the order they were sent, to a receiver on this machine (--to must
be a loopback address: it is a test tool), one line per post: its status code, event, GUID and
status. FILE is a fixtures file (GET /_admin/apps/SLUG/deliveries/fixtures?since=TIME, or the
testing helper's fixtures(app)); --app reads a live app's deliveries since TIME from the server
at --server (default CODEHOST_URL, else http://127.0.0.1:$CODEHOST_PORT) with CODEHOST_ADMIN_TOKEN.
Each post carries the recorded headers and body; with --secret both signature headers
(X-Hub-Signature, X-Hub-Signature-256) are made anew with S, without it they are as recorded.
Exit status 0 when every post was answered 2xx, 1 otherwise. See docs/testing.md.`,
  token: `Usage: codehost token generate --kind classic|fine_grained|oauth|app_user

Prints a new, well-formed token of that kind (prefix, 30 random base62 characters, 6 characters of
checksum): the \`value\` of a seed file's token (classic, fine_grained) or authorization (oauth,
app_user), so that a test suite knows its tokens before the server starts. It stores nothing.`,
};
