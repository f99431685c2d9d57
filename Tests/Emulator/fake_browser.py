#!/usr/bin/env python3
"""A scripted stand-in for the user's browser, used through `BROWSER=` by tests and the demo.

`fake_browser.py <authorization URL>` does what a person with a browser would: it opens the
authorization URL (the emulator answers at once with a 302, as if the user had clicked
"Allow"), then follows the redirect to the loopback listener with a real HTTP GET and checks
that the page says the tab can be closed.

Like a real browser launcher (xdg-open, `firefox <url>`), it returns at once: the work is done
by a detached child, so a caller that waits for `$BROWSER` to exit never deadlocks against
its own listener. Set FAKE_BROWSER_FOREGROUND=1 to do the work in the foreground instead.

FAKE_BROWSER_MODE picks the script:
    follow        (default) follow the redirect once (and its 303 to the clean outcome page)
                  and expect the "close this tab" page
    tamper-state  first deliver the redirect with an altered `state` (expect a refusal, 4xx),
                  then the right one (expect success): the listener must keep waiting
    probe         first GET /favicon.ico on the listener (expect 404), then the right one
    replay        after success, deliver the same redirect again (expect no answer: the
                  listener has closed) -- the outcome is recorded, not judged
    deny          ask the emulator to deny (POST /__emulator/deny), then follow the
                  `error=access_denied` redirect; any answer from the listener is fine
    ignore        do nothing at all (a user who closed the browser; the login times out)

FAKE_BROWSER_LOG=<file> appends one JSON line per step ({"step", "status", "page"}), with the
authorization code and state never written, so tests can check what the browser saw.
Nothing secret is printed: problems go to stderr with the code and state redacted.
"""

import http.client
import json
import os
import sys
import urllib.parse

TIMEOUT = 10


def redact(url):
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    safe = [(key, "REDACTED" if key in ("code", "state") else value) for key, value in query]
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(safe)))


def get(url, method="GET"):
    """One request, no redirect following: (status, headers, body text) or (None, error)."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=TIMEOUT)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    try:
        connection.request(method, target, body=b"" if method == "POST" else None)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode("utf-8", "replace")
    except OSError as error:
        return None, {}, f"{type(error).__name__}: {error}"
    finally:
        connection.close()


def follow(callback):
    """The redirect, and the clean page its 303 leads to (which must not carry the code)."""
    status, headers, page = get(callback)
    if status != 303:
        return status, page
    location = headers.get("Location", "")
    if "code=" in location or "state=" in location:
        return None, "the listener's 303 kept the code or state in Location"
    parts = urllib.parse.urlsplit(callback)
    status, _, page = get(f"{parts.scheme}://{parts.netloc}{location}")
    return status, page


def record(step, status, page):
    path = os.environ.get("FAKE_BROWSER_LOG")
    if path:
        with open(path, "a") as handle:
            handle.write(json.dumps({"step": step, "status": status, "page": page[:500]}) + "\n")


def fail(message):
    record("failure", None, message)
    print(f"fake_browser: {message}", file=sys.stderr)
    return 1


def with_state(url, value):
    parts = urllib.parse.urlsplit(url)
    query = [(key, value if key == "state" else item)
             for key, item in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)]
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


def says_close_tab(page):
    return "close this tab" in page.lower() or "close the tab" in page.lower()


def browse(url, mode):
    if mode == "ignore":
        record("ignored", None, "")
        return 0
    if mode == "deny":
        parts = urllib.parse.urlsplit(url)
        status, _, _ = get(f"{parts.scheme}://{parts.netloc}/__emulator/deny", "POST")
        if status != 200:
            return fail(f"could not ask the emulator to deny (status {status})")
    status, headers, page = get(url)
    record("authorize", status, page)
    if status != 302 or "Location" not in headers:
        return fail(f"the authorization page answered {status}, not a redirect: {page.strip()[:300]}")
    callback = headers["Location"]
    if mode == "tamper-state":
        status, _, page = get(with_state(callback, "tampered-" + os.urandom(4).hex()))
        record("tampered", status, page)
        if status is None or not 400 <= status < 500:
            return fail(f"the listener answered {status} to a tampered state, expected a 4xx refusal")
    if mode == "probe":
        parts = urllib.parse.urlsplit(callback)
        status, _, page = get(f"{parts.scheme}://{parts.netloc}/favicon.ico")
        record("probe", status, page)
        if status != 404:
            return fail(f"the listener answered {status} to /favicon.ico, expected 404")
    status, page = follow(callback)
    record("callback", status, page)
    if mode == "deny":
        return 0 if status is not None else fail(f"the listener did not answer: {page}")
    if status != 200 or not says_close_tab(page):
        return fail(f"the listener answered {status} at {redact(callback)}: {page.strip()[:300]}")
    if mode == "replay":
        status, page = follow(callback)
        record("replay", status, page)
    return 0


def main(argv):
    if len(argv) != 2:
        print("usage: fake_browser.py <authorization URL>", file=sys.stderr)
        return 2
    mode = os.environ.get("FAKE_BROWSER_MODE", "follow")
    if os.environ.get("FAKE_BROWSER_FOREGROUND") == "1":
        return browse(argv[1], mode)
    if os.fork() != 0:
        return 0  # the launcher returns at once, like xdg-open
    os.setsid()
    # The child must not hold the caller's stdout open (a caller reading it to the end would
    # wait for us); stderr stays, so problems are seen.
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os._exit(browse(argv[1], mode))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
