"""pytest fixtures for Stratus (shipped in the stratus-cloud package, recipes/python/).

Use: copy this file next to your tests (or import it) and list it in conftest.py:

    pytest_plugins = ["stratus_fixture"]

Fixtures:
  stratus        (session) a running server: origin, http_origin, ca_path, control_key,
                 identities, token(...), reset(), control(...). Started once per test session with
                 `stratus serve --ephemeral --json --exit-with-stdin`; stopped at the end (and by the
                 operating system closing its standard input if pytest dies).
  stratus_clean  (function) the same server, reset to the demo world before the test.

The command is `npx --no-install stratus` (the package installed in the current folder), or
`node <STRATUS_BIN>` when the environment variable STRATUS_BIN names the package's bin/stratus.mjs.
Requests from Python trust the server through `ca_path` (REQUESTS_CA_BUNDLE, or an ssl context).
Only the standard library is used.
"""
import json
import os
import ssl
import subprocess
import threading
import urllib.parse
import urllib.request

import pytest

_SCOPES = {
    "arm": ["user_impersonation"],
    "analytics": ["Tenant.ReadWrite.All"],
    "platform": ["Eventstream.ReadWrite.All", "Item.ReadWrite.All"],
    "mail": ["Mail.ReadWrite", "Mail.Send"],
    "wopi": ["user_impersonation"],
}


class Stratus:
    """A running Stratus server started by :func:`start`."""

    def __init__(self, process, ready):
        self.process = process
        self.origin = ready["origin"]
        self.http_origin = ready["httpUrl"]
        self.ca_path = ready.get("caFile")
        self.control_key = ready["controlKey"]
        self.identities = ready["identities"]
        self.tenants = ready["identities"]["tenants"]
        self.version = ready["version"]
        self.ssl_context = ssl.create_default_context(cafile=self.ca_path) if self.ca_path else None

    def request(self, method, url, body=None, headers=None):
        """(status, parsed JSON or text) of an HTTPS or HTTP request; never raises for an HTTP error status."""
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
        if body is not None and not isinstance(body, bytes):
            req.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(req, context=self.ssl_context if url.startswith("https:") else None, timeout=30) as res:
                status, raw = res.status, res.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode("utf-8", "replace")

    def control(self, method, path, body=None):
        """A control-plane call (/_stratus/...) with the control key, over the plain-HTTP loopback origin."""
        return self.request(method, self.http_origin + path, body, {"authorization": "Bearer " + self.control_key})

    def reset(self):
        """Empties the store and seeds the demo world again."""
        status, body = self.control("POST", "/_stratus/reset")
        if status >= 300:
            raise RuntimeError("Stratus reset answered %s: %s" % (status, body))

    def token(self, family="arm", user=None, password=None, app=None, secret=None, scopes=None):
        """An access token: delegated (password grant; default the demo administrator) or, with app, client credentials."""
        ids = self.identities
        if app:
            secret = secret or (ids["app"]["clientSecret"] if app == ids["app"]["clientId"] else None)
            form = {"grant_type": "client_credentials", "client_id": app, "client_secret": secret, "scope": "api://stratus/%s/.default" % family}
            tenant = ids["app"]["tenant"]
        else:
            who = next((u for u in (ids["admin"], ids["user"]) if u["userPrincipalName"] == (user or ids["admin"]["userPrincipalName"])), None)
            user = user or ids["admin"]["userPrincipalName"]
            password = password or (who and who["password"])
            names = scopes or _SCOPES[family]
            scope = " ".join(n if "/" in n else "api://stratus/%s/%s" % (family, n) for n in names)
            form = {"grant_type": "password", "client_id": ids["publicClientId"], "username": user, "password": password, "scope": scope}
            tenant = who["tenant"] if who else user.split("@")[-1]
        status, body = self.request("POST", "%s/%s/oauth2/v2.0/token" % (self.http_origin, tenant), urllib.parse.urlencode(form).encode(), {"content-type": "application/x-www-form-urlencoded"})
        if status != 200:
            raise RuntimeError("token request answered %s: %s" % (status, body))
        return body["access_token"]

    def stop(self):
        """Stops the server (closing its standard input) and waits for it; the ephemeral store is removed."""
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def command():
    """The command that runs `stratus`."""
    bin_path = os.environ.get("STRATUS_BIN")
    return ["node", bin_path] if bin_path else ["npx", "--no-install", "stratus"]


def start(timeout=60, extra_args=(), env=None):
    """Starts `stratus serve --ephemeral --json --exit-with-stdin` on free ports and waits for its ready line."""
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("STRATUS_") or k == "STRATUS_CACHE_DIR"}
    child_env.setdefault("STRATUS_LOG_LEVEL", "warn")
    child_env.update(env or {})
    args = command() + ["serve", "--ephemeral", "--json", "--exit-with-stdin", "--https-port", "0", "--http-port", "0", *extra_args]
    process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env, text=True)
    result = {}
    lines = []

    def read():
        for line in process.stdout:
            if "ready" not in result and line.startswith('{"stratus":"ready"'):
                result["ready"] = json.loads(line)
            else:
                lines.append(line.rstrip())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    threading.Thread(target=lambda: [lines.append(l.rstrip()) for l in process.stderr], daemon=True).start()
    waited = 0.0
    while "ready" not in result:
        if process.poll() is not None:
            raise RuntimeError("stratus exited (%s) before it listened: %s" % (process.returncode, "\n".join(lines[-40:])))
        if waited >= timeout:
            process.kill()
            raise RuntimeError("stratus did not start within %s s: %s" % (timeout, "\n".join(lines[-40:])))
        reader.join(0.05)
        waited += 0.05
    return Stratus(process, result["ready"])


@pytest.fixture(scope="session")
def stratus():
    """A Stratus server for the whole test session."""
    server = start()
    yield server
    server.stop()


@pytest.fixture
def stratus_clean(stratus):
    """The session's server, reset to the demo world before this test."""
    stratus.reset()
    return stratus
