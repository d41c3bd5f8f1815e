import json, os, socket, subprocess, tempfile, shutil, time, urllib.request
import pytest
from github import Github

HERE = os.path.dirname(os.path.abspath(__file__))
# The `codehost` command of the package installed beside this file (npm install); it runs on
# codehost's pinned Node.js 24 whatever `node` is on PATH.
CODEHOST = os.environ.get("CODEHOST_BIN", os.path.join(HERE, "node_modules", ".bin", "codehost"))
ADMIN = "pytest-admin-token"

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

@pytest.fixture(scope="session")
def codehost():
    port, data = free_port(), tempfile.mkdtemp()
    env = dict(os.environ, CODEHOST_MODE="laptop", CODEHOST_HOST="127.0.0.1", CODEHOST_PORT=str(port),
               CODEHOST_DATA_DIR=data, CODEHOST_ADMIN_TOKEN=ADMIN, CODEHOST_DEMO="0",
               CODEHOST_TEST_CLOCK="1", CODEHOST_TEST_MODE="1")
    env.pop("DATABASE_URL", None)  # the embedded database in `data`
    server = subprocess.Popen([CODEHOST, "serve"], env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            urllib.request.urlopen(f"{url}/readyz")
            break
        except OSError:
            assert server.poll() is None, "codehost serve exited"
            time.sleep(0.1)
    yield url
    server.terminate()
    server.wait()
    shutil.rmtree(data, ignore_errors=True)

def admin(url, method, path, body=None):
    request = urllib.request.Request(f"{url}/_admin{path}", method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        text = response.read()
        return json.loads(text) if text else None

@pytest.fixture
def gh(codehost):
    admin(codehost, "POST", "/reset", {"to": "demo", "journal": "clear"})  # every test starts from the demo world, the journal empty
    return Github(base_url=f"{codehost}/api/v3",
                  login_or_token="chp_DemoMonaClassicToken00000000013Mkcu6")

def test_reads_a_private_repository(gh, codehost):
    assert gh.get_repo("acme/secret-sauce").private
    assert admin(codehost, "POST", "/requests/count", {"path": "/api/v3/repos/acme/*"})["count"] == 1

def test_starts_clean(gh, codehost):
    assert admin(codehost, "POST", "/requests/count", {"login": "mona"})["count"] == 0
