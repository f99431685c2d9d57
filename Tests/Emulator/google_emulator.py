#!/usr/bin/env python3
"""A local stand-in for Google's OAuth 2.0 and Drive endpoints, for tests and `make demo`.

Design note. One process, one port, standard library only, serving three families of paths:

    /o/oauth2/v2/auth, /token, /revoke      Google's OAuth endpoints for installed apps
    /device/code                            the device authorization endpoint (RFC 8628,
                                            "TVs and Limited Input devices" clients)
    /drive/..., /upload/drive/...           Drive v3 files (create, get, list, update,
                                            delete, generateIds) and revisions, and v2's
                                            files insert/get/update/patch/delete/generateIds
    /__emulator/...                         a control API for tests (no auth, never logged)

It is an independent second implementation of the protocol the Swift client speaks, written
from Google's documentation (FORMAT.md §9.2), so it is deliberately strict where Google is strict:
`client_secret` required, single-use codes, PKCE S256 checked, a refresh answer without a
refresh token, no refresh token at all unless the authorization asked for
`access_type=offline`, app-folder files visible only with `spaces=appDataFolder`, default
`fields` as small as Drive's and checked against the resource schemas (400 "Invalid field
selection"), `size`/`version` as strings, non-unique names, 412 on a stale `If-Match`, 409
`fileIdInUse`, 308 + `Range` for resumable uploads, 206 + `Content-Range` for a `Range`
download, `status` in error bodies, and lenient where Google is: multipart bodies with LF
line endings or a quoted boundary, `q` with and/or/not, parentheses, `contains` and time
comparisons.

It is held to Google: Tests/Emulator/fidelity_google_client.py drives it with Google's own
`google-api-python-client`, built from the discovery documents shipped in that package, and
drive_discovery.py checks this file's field lists (drive_fields.json) and every request our
client sends in the end-to-end tests against those documents.

Start-up contract (stable, for tools outside the test suite too):

    google_emulator.py [--port N] [--ignore-stdin] [--state-file F] [--client-id ID]
                       [--client-secret S] [--device-client-id ID] [--device-client-secret S]
                       [--access-token-lifetime S] [--if-match MODE]
                       [--revisions-kept N] [--revision-max-age-days D]
                       [--max-pinned-revisions N] [--max-page-size N]
                       [--revision-downloads MODE]

    - The first and only line on stdout is `LISTENING http://127.0.0.1:<port>`, printed once
      connections are accepted; with `--port 0` (the default) the port is a free one.
    - It exits when stdin closes, unless `--ignore-stdin` (then SIGTERM stops it); with
      `--state-file` the state is saved on exit and loaded on start.
    - Bad switches exit 2 with argparse's one-line error on stderr and print nothing.
    - POST /__emulator/tokens mints a grant without the browser dance (see below), so a
      tool can talk to Drive at once with `Authorization: Bearer <access_token>`.
    - GOOGLE_EMULATOR_REQUEST_LOG=<file> appends every logged request (the /__emulator/log
      shape, secrets redacted) to the file as one JSON line each.

All state lives in one `State` object behind one lock; a request is read completely before
the lock is taken (so a slow client never blocks others), then handled atomically, which is
what makes the v2 compare-and-swap honest under concurrent clients.

Worked example (what `cloudbackup backup` does against it):

    GET  /drive/v3/files?spaces=appDataFolder&q=name = 'habit-backup.json' and trashed = false
         &fields=files(id,name,size,md5Checksum,version)      -> {"files": []}
    GET  /drive/v3/files/generateIds?space=appDataFolder&count=1 -> {"ids": ["1abc..."]}
    POST /upload/drive/v3/files?uploadType=multipart            -> 200 {"id": "1abc...", ...}
    GET  /drive/v2/files/1abc...                                -> 200, ETag: "..."
    PUT  /upload/drive/v2/files/1abc...?uploadType=media  If-Match: <stale>  -> 412

Control API (JSON in and out, no auth; answers 200 or 400/404 with {"error": ...}):

    POST /__emulator/faults      {"status": 429|403|500|503, "next": N, "reason": r,
                                  "retryAfter": s, "paths": prefix or [prefixes],
                                  "methods": [..]} fail the next N matching requests;
                                 {"cut": N, "when": "after"|"before"} drop the connection
                                  mid-answer (after handling the request, or instead of it);
                                 {"truncate": N} half the bytes of the next N downloads;
                                 {"delay": s, "next": N} wait before answering;
                                 {"clear": true}; a list of rules is accepted too
    POST /__emulator/interleave  {"content" | "contentBase64" | "contentsBase64": [..],
                                  "name"?, "id"?, "count"?, "at"?}: another device writes this
                                 (or each of these in turn) to the file; "at" says when:
                                 "write" (default) between our client's next read of it
                                 (listing, download or metadata) and its next write to it;
                                 "list" / "download" right after our next listing of it /
                                 download of its bytes is answered; "chunk" before our next
                                 chunk (not the last) of a resumable upload to it;
                                 "revisions" right after our next revision listing of any
                                 file is answered (a write into a duplicate, by "id");
                                 {"clear": true} forgets one not yet spent
    POST /__emulator/deny        {"count"?}: the next authorization answers access_denied
    POST /__emulator/device      the device flow's user and switches, any of:
                                 {"userCode": c, "decision": "approve"|"deny"} the user types
                                  code c at verification_url and allows (or cancels); 404 for
                                  an unknown code;
                                 {"approveAfterPolls": N} every device code is approved by
                                  itself after N pending polls (a user who takes a while);
                                 {"slowDown": N} the next N polls answer slow_down;
                                 {"deny": true|false} codes not yet decided answer
                                  access_denied from their next poll on (the user cancels);
                                 {"expire": true|false} they answer expired_token;
                                 {"invalidScope": true|false} /device/code refuses the
                                  app-folder scope with invalid_scope (as some report Google
                                  does); answers the switches and every code's user_code and
                                  status (GET too)
    POST /__emulator/untick      {"scopes": [..]}: the next consent leaves these unticked (Google's
                                 granular consent); the redirect and the grant list the rest
    POST /__emulator/clock       {"offset": s}: moves Drive's clock s seconds from the
                                 machine's: the Date header, Drive's timestamps (revisions'
                                 modifiedTime, so their age), and access tokens' expiry (a
                                 token issued before a jump forward may be expired after it)
    POST /__emulator/settings    any of {"accessTokenLifetime": s (tokens issued from now on),
                                  "ifMatch": "honour"|"open-only"|"ignore",
                                  "revisionsKept": N, "revisionMaxAgeDays": d,
                                  "revisionDownloads": "any"|"pinned-only",
                                  "maxPinnedRevisions": N, "maxPageSize": N,
                                  "deviceInterval": s}; answers
                                  every setting (GET too); 400 naming a bad one
    POST /__emulator/expire-access-tokens | revoke-all | expire-upload-sessions | reset
    GET  /__emulator/stats       counters since start-up or reset: pinsMade (keepForever
                                 set on an unpinned revision), pinsRefused (past
                                 maxPinnedRevisions), unpinsRefused (illegalKeepForever-
                                 Modification), revisionsDeleted (revisions.delete),
                                 purgedByCount, purgedByAge (retention's purges),
                                 downloadsRefused (pinned-only), maxPinnedSeen and
                                 maxRevisionsSeen (the most any file held at once),
                                 tokenRefreshes (refresh_token grants answered),
                                 expiredTokensRefused (401s for an expired access token),
                                 pagesCut (list or revisions.list answers that held less than
                                 was asked, with a nextPageToken)
    GET  /__emulator/log         [{method, path, query (secrets REDACTED), status, fault?,
                                   grantType?, ifMatch?, revoked?, interleaved?, denied?,
                                   grant? (which login sent it: its refresh token's number,
                                   1 for the first issued), revision? (the head revision a
                                   content upload made),
                                   incomplete? (the client hung up mid-body: not handled),
                                   requestBytes, responseBytes (bodies only; a cut answer
                                   counts the half that was sent)}]
    GET  /__emulator/files       every file with metadata, etag, content and contentBase64
    POST /__emulator/files       {"name", "content" | "contentBase64", "parents"?, "id"?,
                                  "modifiedTime"?}: seed a file (names need not be unique)
    POST /__emulator/tokens      {"scope"?, "offline"?}: a grant without the browser dance,
                                 answered like /token (for Drive tests that need a token)
    GET  /__emulator/secrets     every secret issued or received (see below)

`reset` forgets files, tokens, faults and the log but not the list of secrets, zeroes the
stats, and puts the settings back to their start-up values (the command line's, else the
defaults).

Switches for what Google does not document (settings above; command line in brackets):

    ifMatch [--if-match MODE]    where a v2 `If-Match` is checked: `honour` (default) at a
                                 one-request upload, when a resumable session opens and when
                                 it completes; `open-only` never when a session completes;
                                 `ignore` never. A stale etag answers 412 conditionNotMet.
    revisionsKept [--revisions-kept N]      unpinned revisions a file keeps (default 100):
                                 a content upload beyond that purges the oldest unpinned ones
    deviceInterval               the `interval` /device/code answers (default 5, Google's);
                                 polls faster than it are not refused (Google's own
                                 threshold for slow_down is undocumented: see the switch)
    revisionMaxAgeDays [--revision-max-age-days D]   age in days, fractions allowed
                                 (default 30, on the emulator's clock, which /__emulator/clock
                                 moves) past which an unpinned revision goes, counted from
                                 its own modifiedTime
    maxPinnedRevisions [--max-pinned-revisions N]   `keepForever` revisions a file may hold
                                 (default 200, Google's "up to 200"); pinning one more answers
                                 400 badRequest (Google's answer past the cap is undocumented)
    revisionDownloads [--revision-downloads any|pinned-only]   which revisions' bytes
                                 revisions.get?alt=media serves: `any` (default), or, as
                                 Google's guide can be read, only `keepForever` ones (and the
                                 head): any other answers 403 download_restricted_for_revision
    maxPageSize [--max-page-size N]   the most items one page of files.list or revisions.list
                                 holds, whatever pageSize asked (default 1000, the largest
                                 pageSize Google accepts): Google documents that a page may
                                 hold fewer than pageSize, so a client must follow
                                 nextPageToken; a low value makes every listing page

Drive's limits, and the test that crosses each (the soak's defaults lower them all, and
`--require-limits` fails a run that crossed none of one; `make test` runs a short soak with
them lower still):

    limit (Google's value)              setting here          crossed by
    pins per file (200, documented)     maxPinnedRevisions    soak --pin-cap 20 (5 in make test);
                                                              test_the_pin_cap_is_a_setting,
                                                              test_at_most_200_pins_...;
                                                              Swift: ReadPinTests
    unpinned revisions kept (100)       revisionsKept         soak --revisions-kept 10;
                                                              test_retention_keeps_the_head_...
    unpinned revision age (30 days)     revisionMaxAgeDays    soak --revision-max-age-days 0.25
                                                              with its clock an hour a round;
                                                              Swift: RetentionTests (a year)
    files.list / revisions.list page    maxPageSize           soak --max-page-size 3;
      (pageSize 1 to 1000; a page may                         test_a_page_holds_at_most_max_...
      hold fewer)
    access token lifetime (3600 s)      accessTokenLifetime   soak --token-lifetime 1800;
                                                              ShortLivedTokenTests

Revisions: every content upload (create, media, multipart, resumable, v2 or v3) makes one;
a metadata change makes none but moves `version`, `modifiedTime` and the v2 etag. The head
revision and `keepForever` ones are never purged; `headRevisionId` names the head. As Google,
a pin cannot be taken off a revision that is no longer the head: `keepForever: false` on one
answers 400 illegalKeepForeverModification (deleting the revision is the way to release it);
on the head it is allowed.

Device flow (Google's "OAuth 2.0 for TV and Limited-Input Device Applications"): POST
/device/code with the device client's `client_id` and `scope` answers `device_code`,
`user_code`, `verification_url` (Google's name; RFC 8628 says verification_uri),
`expires_in` and `interval`. POST /token with
`grant_type=urn:ietf:params:oauth:grant-type:device_code`, the device client's id and secret
and `device_code` answers 428 authorization_pending, 403 slow_down, 403 access_denied,
400 expired_token, or the grant (once: the device code is then spent, invalid_grant). A
refresh token remembers its client: refreshing it with another answers 401
unauthorized_client.

Tokens are random but recognisable (`ya29.emu-…`, `1//emu-…`, `4/emu-…`, `AH-emu-…` device
codes) and every secret
the emulator issued or received is listed by GET /__emulator/secrets, so tests can scan all
output for leaks. The emulator itself prints exactly one line, `LISTENING <base URL>`.
"""

import argparse
import base64
import calendar
import hashlib
import http
import json
import os
import re
import secrets
import signal
import socket
import stat
import sys
import threading
import time
import traceback
import urllib.parse
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Names a file that every logged request is appended to as a JSON line (the request sweep).
REQUEST_LOG_VARIABLE = "GOOGLE_EMULATOR_REQUEST_LOG"
SCOPE_APPDATA = "https://www.googleapis.com/auth/drive.appdata"
SCOPE_DRIVE = "https://www.googleapis.com/auth/drive"
CHUNK_GRANULARITY = 256 * 1024
APP_FOLDER_ID = "0AEmuAppDataFolderUk9PVA"
CODE_LIFETIME = 600
# Google's documented cap on `keepForever` revisions per file: the default of the
# maxPinnedRevisions setting.
MAX_PINNED_REVISIONS = 200
# A resumable session's upload_id lets anyone holding the URI upload without a token.
SECRET_PARAMETERS = {
    "code", "token", "access_token", "refresh_token", "client_secret", "code_verifier",
    "upload_id", "device_code",
}
REASON_PHRASES = {308: "Resume Incomplete"}
NO_STORE = [("Cache-Control", "no-cache, no-store, max-age=0, must-revalidate"), ("Pragma", "no-cache")]
BASE64URL = re.compile(r"^[A-Za-z0-9_-]+$")
VERIFIER = re.compile(r"^[A-Za-z0-9._~-]{43,128}$")


# ---------------------------------------------------------------------------------------------
# Replies and Google's error shapes


class Reply:
    """One HTTP answer: status, extra headers and body bytes."""

    def __init__(self, status, body=b"", content_type=None, headers=None):
        self.status = status
        self.body = body
        self.content_type = content_type
        self.headers = list(headers or [])
        self.note = {}


class Failure(Exception):
    """Raised by handlers to answer with an error reply at once."""

    def __init__(self, reply):
        super().__init__(reply.status)
        self.reply = reply


def json_reply(status, value, headers=None):
    body = json.dumps(value, indent=2).encode() + b"\n"
    return Reply(status, body, "application/json; charset=UTF-8", headers)


# The canonical gRPC code newer Google answers carry as `status` beside the HTTP one. Which
# code goes with which reason is undocumented: here one per HTTP status, Google's usual mapping.
ERROR_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                404: "NOT_FOUND", 409: "ALREADY_EXISTS", 412: "FAILED_PRECONDITION",
                416: "OUT_OF_RANGE", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
                503: "UNAVAILABLE"}


def drive_error(status, reason, message, domain="global", location=None, location_type=None,
                headers=None):
    """Drive's error body: {"error": {"code", "message", "errors": [{domain, reason, message,
    location?, locationType?}], "status"}}."""
    item = {"domain": domain, "reason": reason, "message": message}
    if location is not None:
        item["location"] = location
        item["locationType"] = location_type
    return Failure(json_reply(status, {"error": {
        "code": status, "message": message, "errors": [item],
        "status": ERROR_STATUS.get(status, "UNKNOWN")}}, headers))


def oauth_error(status, error, description):
    """The token and revocation endpoints' error body: {"error", "error_description"}."""
    return Failure(json_reply(status, {"error": error, "error_description": description}, NO_STORE))


def error_page(status, error, description):
    """The authorization endpoint shows errors to the user as a page, like Google's."""
    text = (f"<!doctype html><title>Error {status}: {error}</title>"
            f"<h1>Access blocked: authorization error</h1>"
            f"<p>Error {status}: {error}</p><p>{description}</p>\n")
    return Failure(Reply(status, text.encode(), "text/html; charset=utf-8"))


def rate_limit_reason(status):
    return {429: "rateLimitExceeded", 403: "userRateLimitExceeded"}.get(status, "backendError")


def fault_reply(rule, path):
    status = int(rule["status"])
    reason = rule.get("reason") or rate_limit_reason(status)
    headers = []
    if rule.get("retryAfter") is not None:
        headers.append(("Retry-After", str(rule["retryAfter"])))
    if path in ("/token", "/revoke", "/device/code"):
        reply = oauth_error(status, "temporarily_unavailable",
                            "The service is temporarily unavailable (injected fault).").reply
        reply.headers += headers
        return reply
    domain = ("usageLimits" if reason in ("rateLimitExceeded", "userRateLimitExceeded",
                                          "storageQuotaExceeded") else "global")
    messages = {
        "rateLimitExceeded": "Rate Limit Exceeded",
        "userRateLimitExceeded": "User Rate Limit Exceeded",
        "backendError": "Backend Error",
        "insufficientPermissions": "Request had insufficient authentication scopes.",
        "insufficientScopes":
            "The granted scopes do not give access to all of the requested spaces.",
        "storageQuotaExceeded": "The user's Drive storage quota has been exceeded.",
    }
    failure = drive_error(status, reason, messages.get(reason, reason), domain, headers=headers)
    return failure.reply


# ---------------------------------------------------------------------------------------------
# Small helpers


def now_rfc3339(instant):
    whole = time.gmtime(instant)
    millis = int(round((instant - int(instant)) * 1000)) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", whole) + f".{millis:03d}Z"


def random_id(prefix, length=32):
    return prefix + secrets.token_urlsafe(length)[:length]


def s256(verifier):
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def first_values(query_string):
    parsed = urllib.parse.parse_qs(query_string, keep_blank_values=True)
    return {key: values[0] for key, values in parsed.items()}


def redacted(query):
    return {key: ("REDACTED" if key in SECRET_PARAMETERS else value) for key, value in query.items()}


def is_loopback_redirect(uri):
    """Desktop clients may redirect to http://127.0.0.1:<any port>/<path> (or localhost, [::1])."""
    try:
        parts = urllib.parse.urlsplit(uri)
        parts.port  # raises on a malformed port
    except ValueError:
        return False
    return (parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1")
            and not parts.fragment and not parts.username)


# ---------------------------------------------------------------------------------------------
# Drive's `fields` selector and `q` language

# The resource schemas' property names, from Google's discovery documents (drive_fields.json,
# kept equal to them by `drive_discovery.py fields`, which the tests run): None a leaf, a dict
# an inline object, a string another schema, "*" a map whose keys are free.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "drive_fields.json")) as _f:
    FIELD_TREES = json.load(_f)


def invalid_fields(text):
    return drive_error(400, "invalidParameter", f"Invalid field selection {text}",
                       location="fields", location_type="parameter")


def parse_fields(text):
    """`nextPageToken,files(id,name),a/b/c` -> {"nextPageToken": None, "files": {"id": None,
    "name": None}, "a": {"b": {"c": None}}}; repeated prefixes merge."""
    tokens = re.findall(r"[A-Za-z0-9_*$.-]+|[(),/]|\S", text)
    position = 0

    def peek():
        return tokens[position] if position < len(tokens) else None

    def take(expected=None):
        nonlocal position
        token = peek()
        if token is None or (expected and token != expected) or (
                not expected and not re.fullmatch(r"[A-Za-z0-9_*$.-]+", token)):
            raise invalid_fields(text)
        position += 1
        return token

    def merge(into, name, sub):
        if name in into and into[name] is not None and sub is not None:
            for key, value in sub.items():
                merge(into[name], key, value)
        elif name in into and (into[name] is None or sub is None):
            into[name] = None  # the whole field wins over a part of it
        else:
            into[name] = sub

    def parse_list():
        selection = {}
        while True:
            path = [take()]
            while peek() == "/":
                take("/")
                path.append(take())
            sub = None
            if peek() == "(":
                take("(")
                sub = parse_list()
                take(")")
            for name in reversed(path[1:]):
                sub = {name: sub}
            merge(selection, path[0], sub)
            if peek() != ",":
                return selection
            take(",")

    if not text.strip():
        raise invalid_fields(text)
    selection = parse_list()
    if position != len(tokens):
        raise invalid_fields(text)
    return selection


def check_fields(selection, version, schema):
    """400 "Invalid field selection NAME", as Google answers, for a name the schema lacks."""
    trees = FIELD_TREES[version]

    def walk(selection, node):
        for name, sub in selection.items():
            if name == "*":
                continue
            if not isinstance(node, dict) or name not in node:
                raise invalid_fields(name)
            child = node[name]
            if sub is not None and child != "*":
                if child is None:
                    raise invalid_fields(name + "/" + next(iter(sub)))
                walk(sub, trees[child] if isinstance(child, str) else child)

    walk(selection, trees[schema])
    return selection


def select(value, selection):
    if selection is None or "*" in selection:
        return value
    if isinstance(value, list):
        return [select(item, selection) for item in value]
    if not isinstance(value, dict):
        return value
    return {key: select(value[key], sub) for key, sub in selection.items() if key in value}


def invalid_query(q):
    return drive_error(400, "invalid", "Invalid Value", location="q", location_type="parameter")


QUERY_TOKEN = re.compile(r"\s*(?:(?P<string>'(?:[^'\\]|\\.)*')|(?P<op><=|>=|!=|=|<|>|\(|\))"
                         r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*))")
TIME_FIELDS = {"modifiedTime": "modified", "createdTime": "created"}


def parse_time(text):
    """An RFC 3339 time as Drive's `q` takes it (`2012-06-04T12:00:00`, optional fraction and
    zone, UTC when none), as epoch seconds; None when it is not one."""
    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)?", text)
    if not match:
        return None
    instant = calendar.timegm(time.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S"))
    instant += float(match.group(2) or 0)
    zone = match.group(3)
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        instant -= sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    return instant


def name_contains(name, prefix):
    """Google: `name contains` "only performs prefix matching" ('Hello' finds HelloWorld,
    'World' does not). Which prefixes count is undocumented: here the name's and each word's
    (split at anything not a letter or digit), ignoring case, as Drive's search does."""
    words = [name] + re.split(r"[^0-9A-Za-z]+", name)
    return any(word.lower().startswith(prefix.lower()) for word in words if word)


def compile_query(q):
    """A predicate over files for Drive's query language: clauses on name, mimeType, trashed,
    parents, modifiedTime and createdTime, joined by `and`, `or`, `not` and parentheses."""
    tokens, position = [], 0
    while position < len(q):
        if not q[position:].strip():
            break
        match = QUERY_TOKEN.match(q, position)
        if not match:
            raise invalid_query(q)
        kind = match.lastgroup
        tokens.append((kind, match.group(kind)))
        position = match.end()
    index = 0

    def peek(offset=0):
        return tokens[index + offset] if index + offset < len(tokens) else (None, None)

    def take():
        nonlocal index
        if index >= len(tokens):
            raise invalid_query(q)
        index += 1
        return tokens[index - 1]

    def keyword(word):
        kind, value = peek()
        return kind == "word" and value.lower() == word

    def string():
        kind, value = take()
        if kind != "string":
            raise invalid_query(q)
        return re.sub(r"\\(.)", r"\1", value[1:-1])

    def joined(word, operand, combine):
        """`operand (word operand)*`: `or` binds looser than `and`, as in Google's examples."""
        tests = [operand()]
        while keyword(word):
            take()
            tests.append(operand())
        return lambda f: combine(test(f) for test in tests)

    def either():
        return joined("or", both, any)

    def both():
        return joined("and", factor, all)

    def factor():
        if keyword("not"):
            take()
            inner = factor()
            return lambda f: not inner(f)
        if peek() == ("op", "("):
            take()
            inner = either()
            if take() != ("op", ")"):
                raise invalid_query(q)
            return inner
        return clause()

    def clause():
        kind, value = peek()
        if kind == "string":
            parent = string()
            if not keyword("in") or peek(1) != ("word", "parents"):
                raise invalid_query(q)
            take(), take()
            parent = APP_FOLDER_ID if parent == "appDataFolder" else parent
            return lambda f: parent in f.parents
        field = take()[1] if kind == "word" else None
        operator = take()
        if field in ("name", "mimeType") and operator in (("op", "="), ("op", "!=")):
            wanted, equal = string(), operator[1] == "="
            key = "name" if field == "name" else "mime_type"
            return lambda f: (getattr(f, key) == wanted) == equal
        if field == "name" and operator == ("word", "contains"):
            prefix = string()
            return lambda f: name_contains(f.name, prefix)
        if field == "mimeType" and operator == ("word", "contains"):
            part = string()
            return lambda f: part in f.mime_type
        if field == "trashed" and operator in (("op", "="), ("op", "!=")):
            kind, value = take()
            if kind != "word" or value not in ("true", "false"):
                raise invalid_query(q)
            # Nothing here is ever in the trash.
            wanted = (value == "true") == (operator[1] == "=")
            return lambda f: wanted is False
        if field in TIME_FIELDS and operator[0] == "op" and operator[1] not in "()":
            instant = parse_time(string())
            if instant is None:
                raise invalid_query(q)
            compare = {"=": float.__eq__, "!=": float.__ne__, "<": float.__lt__,
                       "<=": float.__le__, ">": float.__gt__, ">=": float.__ge__}[operator[1]]
            attribute = TIME_FIELDS[field]
            # Drive's times are to the millisecond, as it shows them.
            return lambda f: compare(round(float(getattr(f, attribute)), 3), round(instant, 3))
        raise invalid_query(q)

    predicate = either()
    if index != len(tokens):
        raise invalid_query(q)
    return predicate


# ---------------------------------------------------------------------------------------------
# The Drive file model


class Revision:
    """One stored content of a file: Drive makes one for every content upload."""

    def __init__(self, revision_id, content, mime_type, instant, keep_forever=False):
        self.id = revision_id
        self.content = bytes(content)
        self.md5 = hashlib.md5(self.content).hexdigest()
        self.mime_type = mime_type
        self.modified = instant
        self.keep_forever = keep_forever

    def v3(self):
        return {
            "kind": "drive#revision",
            "id": self.id,
            "mimeType": self.mime_type,
            "modifiedTime": now_rfc3339(self.modified),
            "keepForever": self.keep_forever,
            "size": str(len(self.content)),
            "md5Checksum": self.md5,
        }

    def saved(self):
        return {"id": self.id, "mimeType": self.mime_type, "modified": self.modified,
                "keepForever": self.keep_forever,
                "contentBase64": base64.b64encode(self.content).decode()}

    @classmethod
    def restored(cls, saved):
        return cls(saved["id"], base64.b64decode(saved["contentBase64"]), saved["mimeType"],
                   saved["modified"], saved["keepForever"])


class DriveFile:
    def __init__(self, file_id, name, mime_type, parents, content, instant):
        self.id = file_id
        self.name = name
        self.mime_type = mime_type
        self.parents = parents
        self.space = "appDataFolder" if APP_FOLDER_ID in parents else "drive"
        self.created = instant
        self.modified = instant
        self.version = 0
        self.etag = ""
        self.revisions = []
        self.revision_count = 0
        # v3's appProperties, which v2 lists as properties of visibility PRIVATE; they stay
        # across content uploads, as any metadata does.
        self.app_properties = {}
        self.write(content, instant)

    @property
    def head(self):
        return self.revisions[-1]

    @property
    def content(self):
        return self.head.content

    @property
    def md5(self):
        return self.head.md5

    def write(self, content, instant):
        """A content upload: a new head revision."""
        self.revision_count += 1
        self.revisions.append(Revision(f"0B{self.revision_count:06d}{secrets.token_hex(4)}",
                                       content, self.mime_type, instant))
        self.touch(instant)

    def touch(self, instant):
        """Any change, content or metadata: Google's `version` "reflects every change made to
        the file", and the v2 etag names the whole resource, so both move."""
        self.modified = instant
        self.version += 1
        # Google's etags are opaque quoted strings that change with every write.
        self.etag = '"' + base64.urlsafe_b64encode(secrets.token_bytes(12)).decode() + '"'

    def purge_revisions(self, now, kept, max_age, uploaded):
        """Google's retention: the head and `keepForever` revisions stay; any other is
        "typically preserved for 30 days" and may go earlier once a file has `kept` of them
        and a new revision is uploaded. Undocumented, so chosen strictly: the age counts from
        the revision's own modifiedTime (not from when it was superseded), so a client can
        never count on a revision outliving its age limit."""
        head = self.head
        before = len(self.revisions)
        self.revisions = [r for r in self.revisions
                          if r is head or r.keep_forever or now - r.modified <= max_age]
        by_age = before - len(self.revisions)
        doomed = set()
        if uploaded:
            unpinned = [r for r in self.revisions if not r.keep_forever]
            doomed = {id(r) for r in unpinned[:max(0, len(unpinned) - kept)] if r is not head}
            self.revisions = [r for r in self.revisions if id(r) not in doomed]
        return by_age, len(doomed)

    def revision(self, revision_id):
        for revision in self.revisions:
            if revision.id == revision_id:
                return revision
        raise drive_error(404, "notFound", f"Revision not found: {revision_id}.",
                          location="revisionId", location_type="parameter")

    def delete_revision(self, revision_id):
        """Google refuses to delete "the last remaining file version"; deleting the head is
        not documented further: here the newest remaining revision becomes the content."""
        revision = self.revision(revision_id)
        if len(self.revisions) == 1:
            raise drive_error(400, "badRequest",
                              "The last remaining revision of a file cannot be deleted.")
        was_head = revision is self.head
        self.revisions.remove(revision)
        return was_head

    def v3(self):
        return {
            "kind": "drive#file",
            "id": self.id,
            "name": self.name,
            "mimeType": self.mime_type,
            "parents": list(self.parents),
            "spaces": [self.space],
            "trashed": False,
            "createdTime": now_rfc3339(self.created),
            "modifiedTime": now_rfc3339(self.modified),
            "size": str(len(self.content)),
            "version": str(self.version),
            "md5Checksum": self.md5,
            "headRevisionId": self.head.id,
            "quotaBytesUsed": str(self.quota_bytes_used),
            **({"appProperties": dict(self.app_properties)} if self.app_properties else {}),
        }

    @property
    def quota_bytes_used(self):
        """Google says pinned revisions "count towards your storage limit"; whether purgeable
        ones do is not documented: here only the head and the pinned ones count."""
        return sum(len(r.content) for r in self.revisions if r is self.head or r.keep_forever)

    def v2(self):
        return {
            "kind": "drive#file",
            "id": self.id,
            "etag": self.etag,
            "title": self.name,
            "mimeType": self.mime_type,
            "parents": [{"kind": "drive#parentReference", "id": parent,
                         "isRoot": parent == "root"} for parent in self.parents],
            "spaces": [self.space],
            "labels": {"trashed": False},
            "createdDate": now_rfc3339(self.created),
            "modifiedDate": now_rfc3339(self.modified),
            "fileSize": str(len(self.content)),
            "version": str(self.version),
            "md5Checksum": self.md5,
            "headRevisionId": self.head.id,
            "quotaBytesUsed": str(self.quota_bytes_used),
            "properties": [{"kind": "drive#property", "key": key, "value": value,
                            "visibility": "PRIVATE"}
                           for key, value in sorted(self.app_properties.items())],
        }

    def control(self):
        entry = self.v3()
        entry["etag"] = self.etag
        entry["revisions"] = [revision.v3() for revision in self.revisions]
        entry["contentBase64"] = base64.b64encode(self.content).decode()
        try:
            entry["content"] = self.content.decode("utf-8")
        except UnicodeDecodeError:
            entry["content"] = None
        return entry

    def saved(self):
        return {"id": self.id, "name": self.name, "mimeType": self.mime_type,
                "parents": self.parents, "created": self.created, "modified": self.modified,
                "version": self.version, "etag": self.etag,
                "revisionCount": self.revision_count, "appProperties": self.app_properties,
                "revisions": [revision.saved() for revision in self.revisions]}

    @classmethod
    def restored(cls, saved):
        revisions = [Revision.restored(r) for r in saved["revisions"]]
        file = cls(saved["id"], saved["name"], saved["mimeType"], saved["parents"],
                   revisions[-1].content, saved["created"])
        file.modified, file.version = saved["modified"], saved["version"]
        file.etag, file.revisions = saved["etag"], revisions
        file.revision_count = saved["revisionCount"]
        file.app_properties = dict(saved.get("appProperties") or {})
        return file


class UploadSession:
    """A resumable upload: what it will create or replace, and the bytes that arrived so far."""

    def __init__(self, kind, metadata, file_id, total, if_match, fields, v2, token):
        self.id = random_id("AEmu", 40)
        self.kind = kind  # "create" or "update"
        self.metadata = metadata
        self.file_id = file_id
        self.total = total
        self.if_match = if_match
        self.fields = fields
        self.v2 = v2
        self.token = token  # the creator's access token record (scopes decide the space)
        self.received = bytearray()
        self.result = None  # the finished file's id


# ---------------------------------------------------------------------------------------------
# The state behind the lock


IF_MATCH_MODES = ("honour", "open-only", "ignore")
REVISION_DOWNLOAD_MODES = ("any", "pinned-only")
DEFAULT_SETTINGS = {"accessTokenLifetime": 3600, "ifMatch": "honour", "revisionsKept": 100,
                    "revisionMaxAgeDays": 30, "revisionDownloads": "any", "deviceInterval": 5,
                    "maxPinnedRevisions": MAX_PINNED_REVISIONS, "maxPageSize": 1000}
# What GET /__emulator/stats counts since start-up or the last reset (see the header).
STATS = ("pinsMade", "pinsRefused", "unpinsRefused", "revisionsDeleted", "purgedByCount",
         "purgedByAge", "downloadsRefused", "maxPinnedSeen", "maxRevisionsSeen", "tokenRefreshes",
         "expiredTokensRefused", "pagesCut")
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
DEVICE_CODE_LIFETIME = 1800
# Google's user codes: letters without look-alikes, shown as XXX-XXX-XXX.
USER_CODE_LETTERS = "BCDFGHJKLMNPQRSTVWXZ"


def checked_settings(changes, current):
    """`current` with `changes` applied, or ValueError naming the bad setting and its range."""
    unknown = set(changes) - set(DEFAULT_SETTINGS)
    if unknown:
        raise ValueError(f"unknown setting {sorted(unknown)[0]!r}; "
                         f"known: {', '.join(DEFAULT_SETTINGS)}")
    settings = dict(current, **changes)
    lifetime, kept, age = (settings["accessTokenLifetime"], settings["revisionsKept"],
                           settings["revisionMaxAgeDays"])
    if type(lifetime) is not int or lifetime < 0:
        raise ValueError("accessTokenLifetime must be a whole number of seconds, 0 or more")
    if settings["ifMatch"] not in IF_MATCH_MODES:
        raise ValueError(f"ifMatch must be one of {', '.join(IF_MATCH_MODES)}")
    if settings["revisionDownloads"] not in REVISION_DOWNLOAD_MODES:
        raise ValueError(
            f"revisionDownloads must be one of {', '.join(REVISION_DOWNLOAD_MODES)}")
    if type(kept) is not int or kept < 1:
        raise ValueError("revisionsKept must be a whole number, 1 or more")
    if type(age) not in (int, float) or age != age or age < 0:
        raise ValueError("revisionMaxAgeDays must be a number of days, 0 or more "
                         "(fractions allowed)")
    if type(settings["maxPinnedRevisions"]) is not int or settings["maxPinnedRevisions"] < 1:
        raise ValueError("maxPinnedRevisions must be a whole number, 1 or more")
    if type(settings["maxPageSize"]) is not int or not 1 <= settings["maxPageSize"] <= 1000:
        raise ValueError("maxPageSize must be a whole number from 1 to 1000")
    if type(settings["deviceInterval"]) is not int or settings["deviceInterval"] < 0:
        raise ValueError("deviceInterval must be a whole number of seconds, 0 or more")
    return settings


class State:
    def __init__(self, client_id, client_secret, settings, device_client_id="test-device-client-id",
                 device_client_secret="test-device-client-secret"):
        self.lock = threading.RLock()
        self.client_id = client_id
        self.client_secret = client_secret
        # client id -> secret: the desktop client, and the "TVs and Limited Input" one.
        self.clients = {client_id: client_secret, device_client_id: device_client_secret}
        self.device_client_id = device_client_id
        self.startup_settings = checked_settings(settings, DEFAULT_SETTINGS)
        self.seen_secrets = [client_secret, device_client_secret]
        self.reset()

    @property
    def lifetime(self):
        return self.settings["accessTokenLifetime"]

    def reset(self):
        with self.lock:
            self.codes = {}
            self.refresh_tokens = {}
            self.access_tokens = {}
            self.files = {}
            self.generated_ids = {}
            self.sessions = {}
            self.faults = []
            self.interleave = None
            self.deny_next = 0
            self.untick_next = None
            self.device_codes = {}
            self.device_switches = {"approveAfterPolls": None, "slowDown": 0,
                                    "invalidScope": False, "deny": False, "expire": False}
            self.clock_offset = 0.0
            self.log = []
            self.settings = dict(self.startup_settings)
            self.stats = dict.fromkeys(STATS, 0)
            # The new head revision a Drive request made, for its log entry.
            self.written = None

    def count(self, name, amount=1):
        self.stats[name] += amount

    def seen(self, name, value):
        self.stats[name] = max(self.stats[name], value)

    def now(self):
        return time.time() + self.clock_offset

    def write(self, file, content):
        """A content upload to `file`: a new head revision, then Google's retention."""
        file.write(content, self.now())
        self.written = file.head.id
        self.purge_revisions(file, uploaded=True)
        self.seen("maxRevisionsSeen", len(file.revisions))

    def purge_revisions(self, file, uploaded=False):
        by_age, by_count = file.purge_revisions(
            self.now(), self.settings["revisionsKept"],
            self.settings["revisionMaxAgeDays"] * 86400, uploaded)
        self.count("purgedByAge", by_age)
        self.count("purgedByCount", by_count)

    def enforces_if_match(self, stage):
        """Whether v2 `If-Match` is checked at `stage`: "write" (a one-request upload or a
        metadata update), "open" (a resumable session opens) or "finish" (it completes).
        Google documents none of this for uploads, hence the switch (see the header)."""
        mode = self.settings["ifMatch"]
        return mode == "honour" or (mode == "open-only" and stage != "finish")

    def remember_secret(self, value):
        if value and value not in self.seen_secrets:
            self.seen_secrets.append(value)

    # --- faults -----------------------------------------------------------------------------

    def take_faults(self, method, path, is_download):
        """Consumes and returns (delay rule, other rule) that apply to this request."""
        delay, other = None, None
        with self.lock:
            for rule in self.faults:
                if rule["remaining"] <= 0 or not self.rule_matches(rule, method, path):
                    continue
                if "delay" in rule:
                    if delay is None:
                        delay = rule
                        rule["remaining"] -= 1
                elif other is None and ("truncate" not in rule or is_download):
                    other = rule
                    rule["remaining"] -= 1
            self.faults = [rule for rule in self.faults if rule["remaining"] > 0]
        return delay, other

    @staticmethod
    def rule_matches(rule, method, path):
        prefixes = rule.get("paths")
        if isinstance(prefixes, str):
            prefixes = [prefixes]
        if prefixes and not any(path.startswith(prefix) for prefix in prefixes):
            return False
        methods = rule.get("methods")
        return not methods or method in methods

    # --- interleaved writes from "another device" ---------------------------------------------

    def note_read(self, file):
        if self.interleave and self.interleave_matches(file):
            self.interleave["armed"].add(file.id)

    def interleave_before_write(self, file):
        """Lets the other device write first if our client read this file since arming."""
        pending = self.interleave
        if not pending or pending["at"] != "write" or file.id not in pending["armed"]:
            return False
        return self.interleave_now(file)

    def interleave_at(self, file, point):
        """Lets the other device write at `point` of our client's exchange with this file."""
        pending = self.interleave
        if not pending or pending["at"] != point or not self.interleave_matches(file):
            return False
        return self.interleave_now(file)

    def interleave_anywhere(self, point):
        """Lets the other device write at `point` of our client's exchange with any file, into
        the first file the interleave names (by id or name): a write into a duplicate while we
        check our own file."""
        pending = self.interleave
        if not pending or pending["at"] != point:
            return False
        file = next((f for f in self.files.values() if self.interleave_matches(f)), None)
        return file is not None and self.interleave_now(file)

    def interleave_now(self, file):
        pending = self.interleave
        self.write(file, pending["contents"][pending["written"] % len(pending["contents"])])
        pending["written"] += 1
        pending["remaining"] -= 1
        pending["armed"].clear()
        if pending["remaining"] <= 0:
            self.interleave = None
        return True

    def interleave_matches(self, file):
        pending = self.interleave
        return ((pending["name"] is None or pending["name"] == file.name)
                and (pending.get("id") is None or pending["id"] == file.id))

    # --- persistence ----------------------------------------------------------------------

    def save(self, path):
        with self.lock:
            data = {
                "files": [file.saved() for file in self.files.values()],
                "refreshTokens": self.refresh_tokens,
                "accessTokens": self.access_tokens,
                "generatedIds": self.generated_ids,
                "secrets": self.seen_secrets,
            }
        temporary = path + ".tmp"
        with open(temporary, "w") as handle:
            json.dump(data, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)

    def load(self, path):
        with open(path) as handle:
            data = json.load(handle)
        with self.lock:
            for saved in data["files"]:
                file = DriveFile.restored(saved)
                self.files[file.id] = file
            self.refresh_tokens = data["refreshTokens"]
            self.access_tokens = data["accessTokens"]
            self.generated_ids = data["generatedIds"]
            for value in data["secrets"]:
                self.remember_secret(value)


# ---------------------------------------------------------------------------------------------
# OAuth 2.0 for installed apps


class OAuth:
    def __init__(self, state):
        self.state = state

    def authorize(self, query):
        state = self.state
        client_id = query.get("client_id", "")
        if not client_id:
            raise error_page(400, "invalid_request", "Missing required parameter: client_id")
        if client_id != state.client_id:
            raise error_page(401, "invalid_client", "The OAuth client was not found.")
        redirect_uri = query.get("redirect_uri", "")
        if not redirect_uri:
            raise error_page(400, "invalid_request", "Missing required parameter: redirect_uri")
        if not is_loopback_redirect(redirect_uri):
            raise error_page(400, "redirect_uri_mismatch",
                             f"A desktop client may only redirect to http://127.0.0.1:<port>/ "
                             f"or http://localhost:<port>/, not {redirect_uri}")
        if query.get("response_type") != "code":
            raise error_page(400, "invalid_request",
                             "Invalid response_type: expected 'code' for an installed app")
        scopes = query.get("scope", "").split()
        if SCOPE_APPDATA not in scopes and SCOPE_DRIVE not in scopes:
            raise error_page(400, "invalid_scope", f"The scope must include {SCOPE_APPDATA}")
        challenge = query.get("code_challenge", "")
        if not challenge:
            raise error_page(400, "invalid_request",
                             "Missing code_challenge: this emulator requires PKCE (RFC 7636)")
        if query.get("code_challenge_method") != "S256":
            raise error_page(400, "invalid_request",
                             "code_challenge_method must be S256 (plain is refused)")
        if len(challenge) != 43 or not BASE64URL.match(challenge):
            raise error_page(400, "invalid_request",
                             "code_challenge must be 43 base64url characters (SHA-256, no padding)")
        answer = {}
        if "state" in query:
            answer["state"] = query["state"]
        with state.lock:
            if state.deny_next > 0:
                state.deny_next -= 1
                answer["error"] = "access_denied"
            else:
                if state.untick_next is not None:
                    scopes = [scope for scope in scopes if scope not in state.untick_next]
                    state.untick_next = None
                code = random_id("4/emu-", 40)
                state.remember_secret(code)
                state.codes[code] = {
                    "redirect_uri": redirect_uri,
                    "challenge": challenge,
                    "scope": " ".join(scopes),
                    "offline": query.get("access_type") == "offline",
                    "issued": time.time(),
                    "used": False,
                }
                answer["code"] = code
                answer["scope"] = " ".join(scopes)
        separator = "&" if urllib.parse.urlsplit(redirect_uri).query else "?"
        location = redirect_uri + separator + urllib.parse.urlencode(answer)
        reply = Reply(302, b"", "text/html; charset=UTF-8", [("Location", location)])
        reply.note["denied"] = "error" in answer
        return reply

    def client_credentials(self, form, authorization):
        """client_id/client_secret from the form or HTTP Basic, checked like Google does."""
        client_id, client_secret = form.get("client_id"), form.get("client_secret")
        if authorization and authorization.lower().startswith("basic "):
            try:
                pair = base64.b64decode(authorization[6:].strip()).decode()
                basic_id, _, basic_secret = pair.partition(":")
                client_id = urllib.parse.unquote(basic_id)
                client_secret = urllib.parse.unquote(basic_secret)
            except (ValueError, UnicodeDecodeError):
                raise oauth_error(400, "invalid_request", "Malformed Authorization header.")
        if client_secret:
            self.state.remember_secret(client_secret)
        if not client_id:
            raise oauth_error(400, "invalid_request", "Could not determine client ID from request.")
        if client_id not in self.state.clients:
            raise oauth_error(401, "invalid_client", "The OAuth client was not found.")
        if not client_secret:
            raise oauth_error(400, "invalid_request", "client_secret is missing.")
        if client_secret != self.state.clients[client_id]:
            raise oauth_error(401, "invalid_client", "Unauthorized")
        return client_id

    def token(self, form, authorization):
        state = self.state
        for key in ("code", "code_verifier", "refresh_token", "device_code"):
            state.remember_secret(form.get(key))
        grant_type = form.get("grant_type", "")
        if grant_type not in ("authorization_code", "refresh_token", DEVICE_GRANT):
            raise oauth_error(400, "unsupported_grant_type", f"Invalid grant_type: {grant_type}")
        with state.lock:
            client_id = self.client_credentials(form, authorization)
            # Each client type has its own grant: a desktop client cannot poll for a device
            # code, nor a device client exchange a redirect's code.
            is_device = client_id == state.device_client_id
            if (grant_type == DEVICE_GRANT) != is_device and grant_type != "refresh_token":
                raise oauth_error(401, "unauthorized_client",
                                  "Unauthorized client or scope in request.")
            if grant_type == "authorization_code":
                return self.exchange_code(form)
            if grant_type == DEVICE_GRANT:
                return self.poll_device(form)
            return self.refresh(form, client_id)

    def device_code(self, form):
        """POST /device/code: a device code for the device client, or Google's errors."""
        state = self.state
        client_id = form.get("client_id", "")
        with state.lock:
            if client_id not in state.clients:
                raise oauth_error(401, "invalid_client", "The OAuth client was not found.")
            if client_id != state.device_client_id:
                raise oauth_error(401, "invalid_client", "Invalid client type.")
            scopes = form.get("scope", "").split()
            if not scopes:
                raise oauth_error(400, "invalid_request", "Missing required parameter: scope")
            if state.device_switches["invalidScope"]:
                raise oauth_error(400, "invalid_scope",
                                  "Not all requested scopes were allowed, disallowed scopes: "
                                  + " ".join(scopes))
            device_code = random_id("AH-emu-", 60)
            state.remember_secret(device_code)
            letters = "".join(secrets.choice(USER_CODE_LETTERS) for _ in range(9))
            user_code = "-".join(letters[i:i + 3] for i in range(0, 9, 3))
            state.device_codes[device_code] = {
                "userCode": user_code, "scope": " ".join(scopes), "status": "pending",
                "polls": 0, "issued": time.time(),
            }
            return json_reply(200, {
                "device_code": device_code, "user_code": user_code,
                "expires_in": DEVICE_CODE_LIFETIME,
                "interval": state.settings["deviceInterval"],
                "verification_url": "https://www.google.com/device",
            }, NO_STORE)

    def poll_device(self, form):
        """One poll of the token endpoint with a device code (RFC 8628 §3.4, §3.5)."""
        state = self.state
        device_code = form.get("device_code")
        if not device_code:
            raise oauth_error(400, "invalid_request", "Missing required parameter: device_code")
        record = state.device_codes.get(device_code)
        if record is None or record["status"] == "spent":
            raise oauth_error(400, "invalid_grant", "Malformed auth code.")
        switches = state.device_switches
        if record["status"] == "pending":
            if switches["expire"] or time.time() - record["issued"] > DEVICE_CODE_LIFETIME:
                record["status"] = "expired"
            elif switches["deny"]:
                record["status"] = "denied"
        # Google's statuses for these errors (428, 403, 400) are from its documentation; the
        # client reads only the `error` code.
        if record["status"] == "expired":
            raise oauth_error(400, "expired_token", "Expired token.")
        if record["status"] == "denied":
            raise oauth_error(403, "access_denied", "Forbidden")
        if switches["slowDown"] > 0:
            switches["slowDown"] -= 1
            raise oauth_error(403, "slow_down", "Forbidden")
        if record["status"] == "pending":
            after = switches["approveAfterPolls"]
            if after is not None and record["polls"] >= after:
                record["status"] = "approved"
            else:
                record["polls"] += 1
                raise oauth_error(428, "authorization_pending", "Precondition Required")
        record["status"] = "spent"
        return json_reply(200, self.grant(record["scope"], True, state.device_client_id),
                          NO_STORE)

    def exchange_code(self, form):
        state = self.state
        code = form.get("code")
        if not code:
            raise oauth_error(400, "invalid_request", "Missing required parameter: code")
        grant = state.codes.get(code)
        if grant is None:
            raise oauth_error(400, "invalid_grant", "Malformed auth code.")
        if grant["used"] or time.time() - grant["issued"] > CODE_LIFETIME:
            raise oauth_error(400, "invalid_grant", "Bad Request")
        # Any attempt burns the code, a failed one included, as Google does.
        grant["used"] = True
        if form.get("redirect_uri") != grant["redirect_uri"]:
            raise oauth_error(400, "redirect_uri_mismatch", "Bad Request")
        verifier = form.get("code_verifier")
        if not verifier:
            raise oauth_error(400, "invalid_grant", "Missing code verifier.")
        if not VERIFIER.match(verifier) or s256(verifier) != grant["challenge"]:
            raise oauth_error(400, "invalid_grant", "Invalid code verifier.")
        return json_reply(200, self.grant(grant["scope"], grant["offline"]), NO_STORE)

    def grant(self, scope, offline, client_id=None):
        """A new grant's token answer (with a refresh token only for offline access), issued
        to `client_id` (default: the desktop client)."""
        state = self.state
        answer = {"expires_in": state.lifetime, "scope": scope, "token_type": "Bearer"}
        refresh_token = None
        if offline:
            refresh_token = random_id("1//emu-", 64)
            state.remember_secret(refresh_token)
            state.refresh_tokens[refresh_token] = {
                "scope": scope, "revoked": False, "client": client_id or state.client_id,
                "number": len(state.refresh_tokens) + 1}
            answer["refresh_token"] = refresh_token
        answer["access_token"] = self.issue_access_token(scope, refresh_token)
        return answer

    def refresh(self, form, client_id):
        state = self.state
        refresh_token = form.get("refresh_token")
        if not refresh_token:
            raise oauth_error(400, "invalid_request", "Missing required parameter: refresh_token")
        record = state.refresh_tokens.get(refresh_token)
        if record is None or record["revoked"]:
            raise oauth_error(400, "invalid_grant", "Token has been expired or revoked.")
        if record.get("client", state.client_id) != client_id:
            raise oauth_error(401, "unauthorized_client", "Unauthorized")
        state.count("tokenRefreshes")
        answer = {
            "access_token": self.issue_access_token(record["scope"], refresh_token),
            "expires_in": state.lifetime,
            "scope": record["scope"],
            "token_type": "Bearer",
        }
        return json_reply(200, answer, NO_STORE)

    def issue_access_token(self, scope, refresh_token):
        token = random_id("ya29.emu-", 80)
        self.state.remember_secret(token)
        self.state.access_tokens[token] = {
            "scope": scope, "refresh": refresh_token,
            "expires": self.state.now() + self.state.lifetime, "revoked": False,
        }
        return token

    def revoke(self, form, query):
        state = self.state
        token = form.get("token") or query.get("token")
        state.remember_secret(token)
        with state.lock:
            if not token:
                raise oauth_error(400, "invalid_request", "Missing required parameter: token")
            grant = None
            if token in state.refresh_tokens and not state.refresh_tokens[token]["revoked"]:
                grant = token
            elif token in state.access_tokens and not state.access_tokens[token]["revoked"]:
                # Revoking an access token revokes the whole grant it came from.
                grant = state.access_tokens[token]["refresh"]
                state.access_tokens[token]["revoked"] = True
            else:
                raise oauth_error(400, "invalid_token", "Token expired or revoked")
            if grant is not None:
                state.refresh_tokens[grant]["revoked"] = True
                for record in state.access_tokens.values():
                    if record["refresh"] == grant:
                        record["revoked"] = True
        reply = json_reply(200, {})
        reply.note["revoked"] = True
        return reply

    def bearer(self, headers):
        """The access token's record, or a 401 in Drive's shape."""
        authorization = headers.get("Authorization", "")
        challenge = [("WWW-Authenticate", 'Bearer realm="https://accounts.google.com/"')]
        if not authorization.lower().startswith("bearer "):
            raise drive_error(
                401, "required",
                "Request is missing required authentication credential. Expected OAuth 2 access "
                "token, login cookie or other valid authentication credential.",
                location="Authorization", location_type="header", headers=challenge)
        token = authorization[7:].strip()
        record = self.state.access_tokens.get(token)
        if record is not None and not record["revoked"] and record["expires"] <= self.state.now():
            self.state.count("expiredTokensRefused")
        if record is None or record["revoked"] or record["expires"] <= self.state.now():
            raise drive_error(
                401, "authError",
                "Request had invalid authentication credentials. Expected OAuth 2 access token, "
                "login cookie or other valid authentication credential.",
                location="Authorization", location_type="header",
                headers=[("WWW-Authenticate",
                          'Bearer realm="https://accounts.google.com/", error="invalid_token"')])
        scopes = record["scope"].split()
        if SCOPE_APPDATA not in scopes and SCOPE_DRIVE not in scopes:
            raise drive_error(403, "insufficientPermissions",
                              "Request had insufficient authentication scopes.")
        return record


# ---------------------------------------------------------------------------------------------
# Drive


class Drive:
    def __init__(self, state, oauth, base_url):
        self.state = state
        self.oauth = oauth
        self.base_url = base_url

    # --- helpers --------------------------------------------------------------------------

    def file(self, file_id):
        file = self.state.files.get(file_id)
        if file is None:
            raise drive_error(404, "notFound", f"File not found: {file_id}.",
                              location="fileId", location_type="parameter")
        return file

    @staticmethod
    def selected(value, query, default, schema, version="v3"):
        """`value` cut to the request's `fields` (checked against `schema`) or `default`."""
        text = query.get("fields") or default
        return select(value, text and check_fields(parse_fields(text), version, schema))

    def file_reply(self, status, file, query):
        return json_reply(status, self.selected(file.v3(), query, "kind,id,name,mimeType", "File"))

    def v2_reply(self, status, file, query):
        """v2 answers the whole resource by default, and names its version in `ETag`."""
        return json_reply(status, self.selected(file.v2(), query, None, "File", "v2"),
                          [("ETag", file.etag)])

    def can_use_drive_space(self, token):
        return SCOPE_DRIVE in token["scope"].split()

    def create_plan(self, token, metadata):
        """Checks create metadata (rules shared by every upload type): (id, name, parents)."""
        state = self.state
        if not isinstance(metadata, dict):
            raise drive_error(400, "badRequest", "The file metadata must be a JSON object.")
        parents = metadata.get("parents") or []
        if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
            raise drive_error(400, "badRequest", "parents must be a list of folder ids.")
        parents = [APP_FOLDER_ID if p == "appDataFolder" else p for p in parents] or ["root"]
        if any(p not in (APP_FOLDER_ID, "root") for p in parents):
            raise drive_error(404, "notFound", f"File not found: {parents[0]}.",
                              location="parents", location_type="other")
        space = "appDataFolder" if APP_FOLDER_ID in parents else "drive"
        if space == "drive" and not self.can_use_drive_space(token):
            raise drive_error(403, "insufficientScopes",
                              "The granted scopes do not give access to all of the requested spaces.")
        file_id = metadata.get("id")
        if file_id is not None:
            if file_id in state.files:
                raise drive_error(409, "fileIdInUse", "A file already exists with the provided ID.")
            if state.generated_ids.get(file_id) != space:
                raise drive_error(400, "fileIdNotUsable", "The provided file ID is not usable.",
                                  location="file.id", location_type="other")
        else:
            file_id = random_id("1", 32)
        return file_id, metadata.get("name") or "Untitled", parents

    def new_file(self, token, metadata, content, media_type):
        file_id, name, parents = self.create_plan(token, metadata)
        mime_type = metadata.get("mimeType") or media_type or "application/octet-stream"
        file = DriveFile(file_id, name, mime_type, parents, content, self.state.now())
        self.state.files[file_id] = file
        self.state.written = file.head.id
        self.state.seen("maxRevisionsSeen", 1)
        return file

    def check_if_match(self, file, if_match, stage):
        """412 when a v2 `If-Match` names another etag than the file's, if `stage` is one the
        `ifMatch` setting enforces."""
        if (if_match is not None and if_match != "*" and if_match != file.etag
                and self.state.enforces_if_match(stage)):
            raise drive_error(412, "conditionNotMet", "Precondition Failed",
                              location="If-Match", location_type="header")

    def write_content(self, file, content, if_match=None, stage="write"):
        state = self.state
        interleaved = state.interleave_before_write(file)
        try:
            self.check_if_match(file, if_match, stage)
        except Failure as failure:
            failure.reply.note["interleaved"] = interleaved
            raise
        state.write(file, content)
        return interleaved

    # --- routes ---------------------------------------------------------------------------

    def route(self, method, path, query, headers, body):
        token = self.oauth.bearer(headers) if "upload_id" not in query else None
        if "upload_id" in query and method in ("PUT", "POST"):
            return self.session_chunk(query, headers, body)
        if path == "/drive/v3/files" and method == "GET":
            return self.list(token, query)
        if match := re.fullmatch(r"/drive/(v2|v3)/files/generateIds", path):
            if method == "GET":
                return self.generate_ids(query, match.group(1) == "v2")
        if match := re.fullmatch(r"(/upload)?/drive/(v2|v3)/files", path):
            if method == "POST":
                return self.create(token, query, headers, body, match.group(2) == "v2",
                                   upload=match.group(1) is not None)
        if match := re.fullmatch(r"/upload/drive/(v2|v3)/files/([^/]+)", path):
            v2 = match.group(1) == "v2"
            if method == ("PUT" if v2 else "PATCH"):
                return self.update(match.group(2), query, headers, body, v2)
        if match := re.fullmatch(r"/drive/v3/files/([^/]+)/revisions", path):
            if method == "GET":
                return self.revisions(match.group(1), query)
        if match := re.fullmatch(r"/drive/v3/files/([^/]+)/revisions/([^/]+)", path):
            return self.revision(method, match.group(1), match.group(2), query, headers, body)
        if match := re.fullmatch(r"/drive/(v2|v3)/files/([^/]+)", path):
            v2, file_id = match.group(1) == "v2", match.group(2)
            if method == "GET":
                return self.get(file_id, query, headers, v2)
            if method == "DELETE":
                return self.delete(file_id)
            if method == "PATCH" or (v2 and method == "PUT"):
                return self.patch_metadata(file_id, query, headers, body, v2)
        raise drive_error(404, "notFound", f"No such endpoint: {method} {path}")

    def list(self, token, query):
        state = self.state
        spaces = [space.strip() for space in query.get("spaces", "drive").split(",")]
        if any(space not in ("drive", "appDataFolder") for space in spaces):
            raise drive_error(400, "invalid", "Invalid Value", location="spaces",
                              location_type="parameter")
        if "drive" in spaces and not self.can_use_drive_space(token):
            raise drive_error(403, "insufficientScopes",
                              "The granted scopes do not give access to all of the requested spaces.")
        q = query.get("q", "")
        predicate = compile_query(q) if q.strip() else (lambda f: True)
        matching = [file for file in state.files.values()
                    if file.space in spaces and predicate(file)]
        matching = self.ordered(matching, query.get("orderBy"))
        page, next_token = self.page(matching, query, 100, q)
        # A listing shows each file's checksum, so a client may write after it with no other
        # read (a kept copy): it counts as a read for the interleave.
        for file in page:
            state.note_read(file)
        answer = {"kind": "drive#fileList", "incompleteSearch": False,
                  "files": [file.v3() for file in page]}
        if next_token:
            answer["nextPageToken"] = next_token
        reply = json_reply(200, self.selected(
            answer, query, "kind,incompleteSearch,nextPageToken,files(kind,id,name,mimeType)",
            "FileList"))
        # After the answer is made: the other device writes once our client has listed.
        reply.note["interleaved"] = any([state.interleave_at(file, "list") for file in page])
        return reply

    def page(self, items, query, default_size, scope):
        """One page of `items` by `pageSize` (at most `maxPageSize`) and `pageToken`, and the
        next page's token; a token only works for the listing (`scope`) that issued it."""
        try:
            page_size = int(query.get("pageSize", default_size))
        except ValueError:
            page_size = 0
        if not 1 <= page_size <= 1000:
            raise drive_error(400, "invalid", "Invalid Value", location="pageSize",
                              location_type="parameter")
        cut = page_size > self.state.settings["maxPageSize"]
        page_size = min(page_size, self.state.settings["maxPageSize"])
        offset = 0
        if query.get("pageToken"):
            try:
                token_value = json.loads(base64.urlsafe_b64decode(query["pageToken"]))
                offset = int(token_value["offset"])
                if token_value["scope"] != scope:
                    raise ValueError("page token of another listing")
            except (ValueError, KeyError, TypeError):
                raise drive_error(400, "invalid", "Invalid Value", location="pageToken",
                                  location_type="parameter")
        next_token = None
        if offset + page_size < len(items):
            if cut:
                self.state.count("pagesCut")
            next_token = base64.urlsafe_b64encode(json.dumps(
                {"offset": offset + page_size, "scope": scope}).encode()).decode()
        return items[offset:offset + page_size], next_token

    @staticmethod
    def ordered(files, order_by):
        keys = {"createdTime": lambda f: f.created, "modifiedTime": lambda f: f.modified,
                "name": lambda f: f.name}
        for part in reversed([p.strip() for p in (order_by or "").split(",") if p.strip()]):
            field, _, direction = part.partition(" ")
            if field not in keys:
                raise drive_error(400, "invalid", "Invalid Value", location="orderBy",
                                  location_type="parameter")
            files = sorted(files, key=keys[field], reverse=direction.strip() == "desc")
        return files

    def generate_ids(self, query, v2):
        space = query.get("space", "drive")
        if space not in ("drive", "appDataFolder"):
            raise drive_error(400, "invalid", "Invalid Value", location="space",
                              location_type="parameter")
        count_name = "maxResults" if v2 else "count"
        try:
            count = int(query.get(count_name, "10"))
        except ValueError:
            count = 0
        if not 1 <= count <= 1000:
            raise drive_error(400, "invalid", "Invalid Value", location=count_name,
                              location_type="parameter")
        ids = [random_id("1", 32) for _ in range(count)]
        for file_id in ids:
            self.state.generated_ids[file_id] = space
        answer = {"kind": "drive#generatedIds", "space": space, "ids": ids}
        return json_reply(200, self.selected(answer, query, None, "GeneratedIds",
                                             "v2" if v2 else "v3"))

    def get(self, file_id, query, headers, v2):
        file = self.file(file_id)
        self.state.note_read(file)
        if query.get("alt") == "media":
            reply = self.media_reply(file.content, file.mime_type, headers)
            reply.note["interleaved"] = self.state.interleave_at(file, "download")
            return reply
        return self.reply(file, query, v2)

    def reply(self, file, query, v2):
        return self.v2_reply(200, file, query) if v2 else self.file_reply(200, file, query)

    @staticmethod
    def media_reply(content, mime_type, headers):
        """The bytes, or one `Range` of them as 206 with `Content-Range` (a multi-range or
        malformed header is ignored, as HTTP allows); `X-Goog-Hash` is the whole content's."""
        digest = base64.b64encode(hashlib.md5(content).digest()).decode()
        extra = [("X-Goog-Hash", "md5=" + digest), ("Accept-Ranges", "bytes")]
        status, body = 200, content
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", headers.get("Range", "").strip())
        if match and (match.group(1) or match.group(2)):
            total = len(content)
            if match.group(1):
                start = int(match.group(1))
                end = min(int(match.group(2)), total - 1) if match.group(2) else total - 1
            else:
                start, end = max(0, total - int(match.group(2))), total - 1
            if start >= total or end < start:
                raise drive_error(416, "requestedRangeNotSatisfiable",
                                  "Request range not satisfiable",
                                  headers=[("Content-Range", f"bytes */{total}")])
            status, body = 206, content[start:end + 1]
            extra.append(("Content-Range", f"bytes {start}-{end}/{total}"))
        reply = Reply(status, body, mime_type, extra)
        reply.note["download"] = True
        return reply

    def delete(self, file_id):
        self.file(file_id)
        del self.state.files[file_id]
        return Reply(204)

    def patch_metadata(self, file_id, query, headers, body, v2):
        file = self.file(file_id)
        metadata = self.v3_metadata(self.json_metadata(body), v2)
        if v2:
            self.check_if_match(file, headers.get("If-Match"), "write")
        self.apply_metadata(file, metadata)
        file.touch(self.state.now())
        return self.reply(file, query, v2)

    @staticmethod
    def apply_metadata(file, metadata):
        """The metadata changes this emulator keeps: the name, the media type and the app
        properties (a key set to null is removed, as Google documents)."""
        if metadata.get("name"):
            file.name = metadata["name"]
        if metadata.get("mimeType"):
            file.mime_type = metadata["mimeType"]
        properties = metadata.get("appProperties")
        if properties is not None:
            if not isinstance(properties, dict) or not all(
                    isinstance(v, str) or v is None for v in properties.values()):
                raise drive_error(400, "invalid", "Invalid value for appProperties.",
                                  location="appProperties", location_type="other")
            for key, value in properties.items():
                if value is None:
                    file.app_properties.pop(key, None)
                else:
                    file.app_properties[key] = value

    def revisions(self, file_id, query):
        file = self.file(file_id)
        self.state.purge_revisions(file)
        page, next_token = self.page(file.revisions, query, 200, file_id)
        answer = {"kind": "drive#revisionList", "revisions": [r.v3() for r in page]}
        if next_token:
            answer["nextPageToken"] = next_token
        reply = json_reply(200, self.selected(
            answer, query, "kind,nextPageToken,revisions(kind,id,mimeType,modifiedTime)",
            "RevisionList"))
        reply.note["interleaved"] = self.state.interleave_anywhere("revisions")
        return reply

    def revision(self, method, file_id, revision_id, query, headers, body):
        file = self.file(file_id)
        self.state.purge_revisions(file)
        revision = file.revision(revision_id)
        if method == "GET" and query.get("alt") == "media":
            if (self.state.settings["revisionDownloads"] == "pinned-only"
                    and not revision.keep_forever and revision is not file.head):
                self.state.count("downloadsRefused")
                raise drive_error(403, "download_restricted_for_revision",
                                  "Only revisions kept forever can be downloaded; set "
                                  "keepForever first.")
            return self.media_reply(revision.content, revision.mime_type, headers)
        if method == "GET":
            return self.revision_reply(revision, query)
        if method == "PATCH":
            metadata = self.json_metadata(body)
            if "keepForever" in metadata:
                if not isinstance(metadata["keepForever"], bool):
                    raise drive_error(400, "invalid", "Invalid value for keepForever.",
                                      location="keepForever", location_type="other")
                pinned = sum(1 for r in file.revisions if r.keep_forever and r is not revision)
                cap = self.state.settings["maxPinnedRevisions"]
                if metadata["keepForever"] and not revision.keep_forever and pinned >= cap:
                    # Google allows "up to 200"; its answer past that is undocumented: a 400.
                    self.state.count("pinsRefused")
                    raise drive_error(400, "badRequest",
                                      f"A file can keep at most {cap} revisions forever.")
                if (not metadata["keepForever"] and revision.keep_forever
                        and revision is not file.head):
                    # Google: a pin cannot be taken off a revision that is no longer the head;
                    # only deleting the revision releases it.
                    self.state.count("unpinsRefused")
                    raise drive_error(400, "illegalKeepForeverModification",
                                      "keepForever cannot be set to false on a revision that "
                                      "is not the head revision.",
                                      location="keepForever", location_type="other")
                if metadata["keepForever"] and not revision.keep_forever:
                    self.state.count("pinsMade")
                revision.keep_forever = metadata["keepForever"]
                self.state.seen("maxPinnedSeen", pinned + revision.keep_forever)
            return self.revision_reply(revision, query)
        if method == "DELETE":
            if file.delete_revision(revision_id):
                file.touch(self.state.now())
            self.state.count("revisionsDeleted")
            return Reply(204)
        raise drive_error(404, "notFound", f"No such endpoint: {method} revisions")

    def revision_reply(self, revision, query):
        return json_reply(200, self.selected(revision.v3(), query, "kind,id,mimeType,modifiedTime",
                                             "Revision"))

    # --- uploads --------------------------------------------------------------------------

    @staticmethod
    def json_metadata(body):
        if not body.strip():
            return {}
        try:
            metadata = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise drive_error(400, "parseError", "Parse Error")
        if not isinstance(metadata, dict):
            raise drive_error(400, "badRequest", "The file metadata must be a JSON object.")
        return metadata

    @staticmethod
    def v3_metadata(metadata, v2):
        """v2's names for what v3 calls `name` and `parents`, in v3's shape."""
        if not v2:
            return metadata
        metadata = dict(metadata)
        if "title" in metadata:
            metadata["name"] = metadata.pop("title")
        if isinstance(metadata.get("parents"), list):
            metadata["parents"] = [p.get("id") if isinstance(p, dict) else p
                                   for p in metadata["parents"]]
        if "properties" in metadata:
            # v2's private properties are v3's appProperties; public ones (v3's properties,
            # visible to other apps) are not kept here: nothing of ours uses them.
            listed = metadata.pop("properties")
            if not isinstance(listed, list) or not all(
                    isinstance(p, dict) and isinstance(p.get("key"), str) for p in listed):
                raise drive_error(400, "invalid", "Invalid value for properties.",
                                  location="properties", location_type="other")
            metadata["appProperties"] = {p["key"]: p.get("value") for p in listed
                                         if p.get("visibility") == "PRIVATE"}
        return metadata

    @staticmethod
    def multipart(headers, body):
        """multipart/related: a JSON metadata part, then the media part. Lines may end in CRLF
        or LF alone and the boundary may be quoted, as Google's own client sends them."""
        content_type = headers.get("Content-Type", "")
        match = re.search(r'boundary=(?:"([^"]+)"|([^";\s]+))', content_type)
        if not content_type.lower().startswith("multipart/related") or not match:
            raise drive_error(400, "badContent",
                              "Multipart uploads need Content-Type: multipart/related; boundary=…")
        delimiter = b"--" + (match.group(1) or match.group(2)).encode()
        pieces = body.split(delimiter)
        parts = []
        for piece in pieces[1:]:
            if piece.startswith(b"--"):
                break
            piece = piece[2:] if piece.startswith(b"\r\n") else piece[1:] if piece.startswith(b"\n") else piece
            found = re.search(rb"\r?\n\r?\n", piece)
            if not found:
                raise drive_error(400, "badContent", "Malformed multipart body.")
            head, content = piece[:found.start()], piece[found.end():]
            content = content[:-2] if content.endswith(b"\r\n") else content[:-1] if content.endswith(b"\n") else content
            part_type = None
            for line in re.split(r"\r?\n", head.decode("latin-1")):
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-type":
                    part_type = value.strip()
            parts.append((part_type, content))
        if len(parts) != 2:
            raise drive_error(400, "badContent",
                              f"Multipart body must have 2 parts (metadata, media), found {len(parts)}.")
        return Drive.json_metadata(parts[0][1]), parts[1][1], parts[1][0]

    def create(self, token, query, headers, body, v2, upload):
        upload_type = query.get("uploadType") if upload else None
        if upload_type is None:
            metadata, content, media_type = self.json_metadata(body), b"", None
            if upload:
                raise drive_error(400, "invalid", "Invalid Value", location="uploadType",
                                  location_type="parameter")
        elif upload_type == "media":
            metadata, content, media_type = {}, body, headers.get("Content-Type")
        elif upload_type == "multipart":
            metadata, content, media_type = self.multipart(headers, body)
        elif upload_type == "resumable":
            metadata = self.v3_metadata(self.json_metadata(body), v2)
            self.create_plan(token, metadata)
            metadata.setdefault("mimeType", headers.get("X-Upload-Content-Type"))
            session = UploadSession("create", metadata, None, self.declared_length(headers),
                                    None, query.get("fields"), v2, token)
            return self.open_session(session, f"/upload/drive/{'v2' if v2 else 'v3'}/files")
        else:
            raise drive_error(400, "invalid", "Invalid Value", location="uploadType",
                              location_type="parameter")
        file = self.new_file(token, self.v3_metadata(metadata, v2), content, media_type)
        return self.reply(file, query, v2)

    def update(self, file_id, query, headers, body, v2):
        file = self.file(file_id)
        upload_type = query.get("uploadType")
        if_match = headers.get("If-Match") if v2 else None
        if upload_type in ("media", "multipart"):
            metadata, content = {}, body
            if upload_type == "multipart":
                metadata, content, _ = self.multipart(headers, body)
            interleaved = self.write_content(file, content, if_match)
            self.apply_metadata(file, self.v3_metadata(metadata, v2))
            reply = self.reply(file, query, v2)
            reply.note["interleaved"] = interleaved
            return reply
        if upload_type == "resumable":
            self.check_if_match(file, if_match, "open")
            session = UploadSession("update", self.v3_metadata(self.json_metadata(body), v2),
                                    file_id, self.declared_length(headers), if_match,
                                    query.get("fields"), v2, None)
            version = "v2" if v2 else "v3"
            return self.open_session(session, f"/upload/drive/{version}/files/{file_id}")
        raise drive_error(400, "invalid", "Invalid Value", location="uploadType",
                          location_type="parameter")

    @staticmethod
    def declared_length(headers):
        value = headers.get("X-Upload-Content-Length")
        if value is None:
            return None
        if not value.isdigit():
            raise drive_error(400, "badRequest", "X-Upload-Content-Length must be a number.")
        return int(value)

    def open_session(self, session, path):
        self.state.sessions[session.id] = session
        self.state.remember_secret(session.id)
        location = (f"{self.base_url}{path}?uploadType=resumable&upload_id={session.id}")
        return Reply(200, b"", None, [("Location", location), ("X-GUploader-UploadID", session.id)])

    def session_chunk(self, query, headers, body):
        session = self.state.sessions.get(query["upload_id"])
        if session is None:
            raise drive_error(404, "notFound",
                              "The upload session was not found or has expired; start a new one.")
        if session.result is not None:
            return self.session_result(session)
        content_range = headers.get("Content-Range")
        received = len(session.received)
        interleaved = False
        if content_range is None:
            if received:
                raise drive_error(400, "badRequest",
                                  "Content-Range is required once part of the upload has arrived.")
            start, total = 0, len(body)
            end = len(body) - 1
        else:
            match = re.fullmatch(r"bytes (?:(\d+)-(\d+)|\*)/(\d+|\*)", content_range.strip())
            if not match:
                raise drive_error(400, "badRequest", f"Invalid Content-Range: {content_range}")
            total = None if match.group(3) == "*" else int(match.group(3))
            if match.group(1) is None:
                start = end = None
            else:
                start, end = int(match.group(1)), int(match.group(2))
        if total is not None:
            if session.total is not None and session.total != total:
                raise drive_error(400, "badRequest",
                                  f"The total size changed from {session.total} to {total}.")
            if total < received:
                raise drive_error(400, "badRequest", "The total is smaller than what arrived.")
            session.total = total
        if start is not None:
            if end < start - 1 or end - start + 1 != len(body):
                raise drive_error(400, "badRequest",
                                  f"Content-Range {content_range} does not match the "
                                  f"{len(body)} bytes sent.")
            if start > received:
                raise drive_error(400, "badRequest",
                                  f"Chunk starts at byte {start} but only {received} bytes "
                                  f"arrived; query the status and resume from the Range.")
            is_final = session.total is not None and end + 1 == session.total
            if not is_final and len(body) % CHUNK_GRANULARITY != 0:
                raise drive_error(400, "badRequest",
                                  f"Chunk of {len(body)} bytes: every chunk but the last must be "
                                  f"a multiple of {CHUNK_GRANULARITY} bytes.")
            if session.total is not None and end + 1 > session.total:
                raise drive_error(400, "badRequest", "The chunk ends after the declared total.")
            if not is_final and session.kind != "create":
                interleaved = self.state.interleave_at(self.file(session.file_id), "chunk")
            session.received.extend(body[received - start:])
        if session.total is not None and len(session.received) == session.total:
            return self.finish_session(session)
        headers_out = []
        if session.received:
            headers_out.append(("Range", f"bytes=0-{len(session.received) - 1}"))
        reply = Reply(308, b"", None, headers_out)
        reply.note["interleaved"] = interleaved
        return reply

    def finish_session(self, session):
        content = bytes(session.received)
        interleaved = False
        if session.kind == "create":
            file = self.new_file(session.token, session.metadata, content,
                                 session.metadata.get("mimeType"))
        else:
            file = self.file(session.file_id)
            interleaved = self.write_content(file, content, session.if_match, "finish")
            self.apply_metadata(file, session.metadata)
        session.result = file.id
        session.received = bytearray()
        reply = self.session_result(session)
        reply.note["interleaved"] = interleaved
        return reply

    def session_result(self, session):
        file = self.file(session.result)
        return self.reply(file, {"fields": session.fields} if session.fields else {}, session.v2)


# ---------------------------------------------------------------------------------------------
# The control API


class Control:
    def __init__(self, state, oauth):
        self.state = state
        self.oauth = oauth

    def route(self, method, path, body):
        state = self.state
        name = path[len("/__emulator/"):]
        data = {}
        if body.strip():
            try:
                data = json.loads(body)
            except ValueError:
                return json_reply(400, {"error": "the control API takes JSON bodies"})
        with state.lock:
            if name == "faults" and method == "POST":
                rules = data if isinstance(data, list) else [data]
                if any(rule.get("clear") for rule in rules):
                    state.faults = []
                for rule in rules:
                    if not rule.get("clear"):
                        state.faults.append(self.fault_rule(rule))
                return json_reply(200, state.faults)
            if name == "faults" and method == "GET":
                return json_reply(200, state.faults)
            if name == "interleave" and method == "POST":
                if data.get("clear"):
                    state.interleave = None
                    return json_reply(200, {"armed": False})
                at = data.get("at", "write")
                if at not in ("write", "list", "download", "chunk", "revisions"):
                    return json_reply(400, {"error": f"unknown interleave point '{at}'"})
                # A list makes a device that writes something new each time, in turn.
                contents = ([base64.b64decode(item) for item in data["contentsBase64"]]
                            if "contentsBase64" in data else [self.content_of(data)])
                state.interleave = {"contents": contents, "name": data.get("name"),
                                    "id": data.get("id"),
                                    "remaining": int(data.get("count", len(contents))),
                                    "armed": set(), "at": at, "written": 0}
                return json_reply(200, {"armed": True})
            if name == "deny" and method == "POST":
                state.deny_next += int(data.get("count", 1))
                return json_reply(200, {"denyNext": state.deny_next})
            if name == "device" and method == "POST":
                return self.device(data)
            if name == "device" and method == "GET":
                return self.device({})
            if name == "untick" and method == "POST":
                state.untick_next = set(data.get("scopes", []))
                return json_reply(200, {"untick": sorted(state.untick_next)})
            if name == "clock" and method == "POST":
                state.clock_offset = float(data.get("offset", 0))
                return json_reply(200, {"offset": state.clock_offset})
            if name == "settings" and method == "POST":
                if not isinstance(data, dict):
                    return json_reply(400, {"error": "settings are a JSON object"})
                try:
                    state.settings = checked_settings(data, state.settings)
                except ValueError as error:
                    return json_reply(400, {"error": str(error)})
                return json_reply(200, state.settings)
            if name == "settings" and method == "GET":
                return json_reply(200, state.settings)
            if name == "expire-access-tokens" and method == "POST":
                for record in state.access_tokens.values():
                    record["expires"] = 0
                return json_reply(200, {"expired": len(state.access_tokens)})
            if name == "revoke-all" and method == "POST":
                for record in list(state.refresh_tokens.values()) + list(state.access_tokens.values()):
                    record["revoked"] = True
                return json_reply(200, {"revoked": True})
            if name == "expire-upload-sessions" and method == "POST":
                count = len(state.sessions)
                state.sessions = {}
                return json_reply(200, {"expired": count})
            if name == "log" and method == "GET":
                return json_reply(200, state.log)
            if name == "stats" and method == "GET":
                return json_reply(200, state.stats)
            if name == "files" and method == "GET":
                return json_reply(200, [file.control() for file in state.files.values()])
            if name == "files" and method == "POST":
                return self.seed(data)
            if name == "tokens" and method == "POST":
                scope = data.get("scope", SCOPE_APPDATA)
                return json_reply(200, self.oauth.grant(scope, data.get("offline", True)))
            if name == "secrets" and method == "GET":
                return json_reply(200, list(state.seen_secrets))
            if name == "reset" and method == "POST":
                state.reset()
                return json_reply(200, {"reset": True})
        return json_reply(404, {"error": f"no control endpoint {method} {path}"})

    def device(self, data):
        """The device flow's user (a decision on one user code) and its switches."""
        state = self.state
        switches = state.device_switches
        pending = [r for r in state.device_codes.values() if r["status"] == "pending"]
        if "userCode" in data:
            decision = data.get("decision", "approve")
            if decision not in ("approve", "deny"):
                return json_reply(400, {"error": "decision is approve or deny"})
            matches = [r for r in pending if r["userCode"] == data["userCode"]]
            if not matches:
                return json_reply(404, {"error": "no pending device code has this user code"})
            matches[0]["status"] = "approved" if decision == "approve" else "denied"
        if "approveAfterPolls" in data:
            switches["approveAfterPolls"] = (None if data["approveAfterPolls"] is None
                                             else int(data["approveAfterPolls"]))
        if "slowDown" in data:
            switches["slowDown"] = int(data["slowDown"])
        if "invalidScope" in data:
            switches["invalidScope"] = bool(data["invalidScope"])
        for switch in ("deny", "expire"):
            if switch in data:
                switches[switch] = bool(data[switch])
        return json_reply(200, dict(switches, codes=[
            {"userCode": r["userCode"], "status": r["status"], "polls": r["polls"]}
            for r in state.device_codes.values()]))

    @staticmethod
    def fault_rule(rule):
        kinds = [kind for kind in ("status", "cut", "truncate", "delay") if kind in rule]
        if len(kinds) != 1:
            raise Failure(json_reply(400, {
                "error": "a fault has exactly one of status, cut, truncate, delay"}))
        kind = kinds[0]
        entry = dict(rule)
        if kind in ("cut", "truncate"):
            entry["remaining"] = int(rule[kind])
        else:
            entry["remaining"] = int(rule.get("next", 1))
        entry["kind"] = kind
        return entry

    @staticmethod
    def content_of(data):
        """File bytes from a control request: `contentBase64`, or `content` as UTF-8 text."""
        if "contentBase64" in data:
            return base64.b64decode(data["contentBase64"])
        return str(data.get("content", "")).encode()

    def seed(self, data):
        state = self.state
        content = self.content_of(data)
        file_id = data.get("id") or random_id("1", 32)
        parents = [APP_FOLDER_ID if p == "appDataFolder" else p
                   for p in data.get("parents", ["appDataFolder"])]
        instant = state.now()
        if "modifiedTime" in data:
            instant = calendar.timegm(time.strptime(data["modifiedTime"][:19], "%Y-%m-%dT%H:%M:%S"))
        file = DriveFile(file_id, data.get("name", "habit-backup.json"),
                         data.get("mimeType", "application/json"), parents, content, instant)
        state.files[file.id] = file
        return json_reply(200, file.control())


# ---------------------------------------------------------------------------------------------
# HTTP plumbing


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "GoogleEmulator/1"
    sys_version = ""

    def log_message(self, format, *args):
        """Silent: the request log is kept in memory and served by /__emulator/log."""

    def do_GET(self):
        self.dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def read_body(self):
        """The whole request body, or None when the client went away before sending it all:
        such a request is dropped unhandled, as Google drops an interrupted upload."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                line = self.rfile.readline()
                if not line:
                    return None
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunk = self.rfile.read(size)
                if len(chunk) < size:
                    return None
                chunks.append(chunk)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        return body if len(body) == length else None

    def dispatch(self):
        server = self.server
        state = server.state
        split = urllib.parse.urlsplit(self.path)
        path, query = split.path, first_values(split.query)
        method = self.command
        try:
            body = self.read_body()
        except (ValueError, OSError):
            body = None
        if body is None:
            self.close_connection = True
            self.append_log({"method": method, "path": path, "query": redacted(query),
                             "status": None, "incomplete": True})
            return
        if path.startswith("/__emulator/"):
            try:
                reply = server.control.route(method, path, body)
            except Failure as failure:
                reply = failure.reply
            except (ValueError, TypeError, KeyError, AttributeError) as error:
                reply = json_reply(400, {"error": f"bad control request: {error!r}"})
            self.send(reply)
            return
        is_download = method == "GET" and query.get("alt") == "media"
        delay, fault = state.take_faults(method, path, is_download)
        if delay is not None:
            time.sleep(float(delay["delay"]))
        entry = {"method": method, "path": path, "query": redacted(query),
                 "requestBytes": len(body)}
        if path.startswith(("/drive/", "/upload/drive/")):
            with state.lock:
                session = state.sessions.get(query.get("upload_id"))
                record = (session.token if session is not None else state.access_tokens.get(
                    self.headers.get("Authorization", "")[7:].strip()))
                self.note_grant(entry, (record or {}).get("refresh"))
        if fault is not None and fault["kind"] == "status":
            reply = fault_reply(fault, path)
        elif fault is not None and fault["kind"] == "cut" and fault.get("when") == "before":
            entry.update(status=None, fault="cut", responseBytes=0)
            self.append_log(entry)
            self.cut(b"", 0)
            return
        else:
            reply = self.handle_request(method, path, query, body, entry)
        if fault is not None:
            entry["fault"] = fault["kind"]
        if fault is not None and fault["kind"] == "truncate" and reply.note.get("download"):
            reply.body = reply.body[:len(reply.body) // 2]
        entry["status"] = reply.status
        cut = fault is not None and fault["kind"] == "cut"
        entry["responseBytes"] = len(reply.body) // 2 if cut else len(reply.body)
        for key in ("revoked", "interleaved", "denied"):
            if reply.note.get(key):
                entry[key] = True
        self.append_log(entry)
        if cut:
            self.cut(self.raw(reply), len(reply.body))
        else:
            self.send(reply)

    def handle_request(self, method, path, query, body, entry):
        server = self.server
        headers = self.headers
        if "If-Match" in headers:
            entry["ifMatch"] = True
        try:
            if path == "/o/oauth2/v2/auth" and method == "GET":
                return server.oauth.authorize(query)
            if path in ("/token", "/revoke") and method == "POST":
                content_type = headers.get("Content-Type", "")
                if not content_type.startswith("application/x-www-form-urlencoded"):
                    raise oauth_error(400, "invalid_request",
                                      "Expected Content-Type: application/x-www-form-urlencoded")
                form = first_values(body.decode("utf-8", "replace"))
                if path == "/token":
                    entry["grantType"] = form.get("grant_type")
                    self.note_grant(entry, form.get("refresh_token"))
                    return server.oauth.token(form, headers.get("Authorization"))
                return server.oauth.revoke(form, query)
            if path == "/device/code" and method == "POST":
                content_type = headers.get("Content-Type", "")
                if not content_type.startswith("application/x-www-form-urlencoded"):
                    raise oauth_error(400, "invalid_request",
                                      "Expected Content-Type: application/x-www-form-urlencoded")
                return server.oauth.device_code(first_values(body.decode("utf-8", "replace")))
            if path.startswith("/drive/") or path.startswith("/upload/drive/"):
                with server.state.lock:
                    state = server.state
                    state.written = None
                    try:
                        return server.drive.route(method, path, query, headers, body)
                    finally:
                        if state.written is not None:
                            entry["revision"] = state.written
            raise drive_error(404, "notFound", f"No such endpoint: {method} {path}")
        except Failure as failure:
            return failure.reply
        except Exception:  # a bug in the emulator: answer 500 and show it on stderr
            traceback.print_exc()
            return drive_error(500, "backendError", "Emulator bug; see its stderr.").reply

    def note_grant(self, entry, refresh_token):
        """Which login (grant) sent the request: the number of its refresh token, 1 for the
        first issued since start-up or reset, so a test can tell its devices apart."""
        number = self.server.state.refresh_tokens.get(refresh_token or "", {}).get("number")
        if number is not None:
            entry["grant"] = number

    def append_log(self, entry):
        with self.server.state.lock:
            self.server.state.log.append(entry)
        if self.server.request_log is not None:
            # One write of one line on an O_APPEND descriptor: emulators running side by side
            # can share the file without mixing their lines.
            os.write(self.server.request_log, (json.dumps(entry) + "\n").encode())

    def raw(self, reply):
        state = self.server.state
        phrase = REASON_PHRASES.get(reply.status)
        if phrase is None:
            try:
                phrase = http.HTTPStatus(reply.status).phrase
            except ValueError:
                phrase = "Status"
        lines = [f"HTTP/1.1 {reply.status} {phrase}",
                 f"Date: {formatdate(state.now(), usegmt=True)}",
                 f"Server: {self.server_version}"]
        if reply.content_type:
            lines.append(f"Content-Type: {reply.content_type}")
        lines.append(f"Content-Length: {len(reply.body)}")
        for name, value in reply.headers:
            lines.append(f"{name}: {value}")
        if self.close_connection:
            lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + reply.body

    def send(self, reply):
        try:
            self.wfile.write(self.raw(reply))
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def cut(self, data, body_length):
        """Drops the connection mid-answer (a network failure): complete headers and half the
        body when there is a body, else half the status line, so no client can mistake it for
        a whole answer."""
        self.close_connection = True
        if body_length:
            kept = len(data) - body_length + body_length // 2
        else:
            kept = min(len(data), 6)
        try:
            self.wfile.write(data[:kept])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def watch_stdin(server):
    """Stops the server when standard input closes, so a crashed test never leaves us running.
    Only when stdin is a pipe or socket: started in the background with /dev/null, we stay."""
    try:
        fd = sys.stdin.fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError):
        return
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return

    def wait():
        # os.read, not sys.stdin: a daemon thread blocked inside a buffered reader aborts the
        # interpreter at exit.
        while os.read(fd, 65536):
            pass
        server.shutdown()

    threading.Thread(target=wait, daemon=True).start()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--client-id", default="test-client-id")
    parser.add_argument("--client-secret", default="test-client-secret")
    parser.add_argument("--device-client-id", default="test-device-client-id",
                        help='the "TVs and Limited Input devices" client of /device/code')
    parser.add_argument("--device-client-secret", default="test-device-client-secret")
    parser.add_argument("--access-token-lifetime", type=int, metavar="SECONDS",
                        default=DEFAULT_SETTINGS["accessTokenLifetime"])
    parser.add_argument("--if-match", choices=IF_MATCH_MODES, default=DEFAULT_SETTINGS["ifMatch"],
                        help="when a v2 If-Match is checked (default: %(default)s)")
    parser.add_argument("--revisions-kept", type=int, metavar="N",
                        default=DEFAULT_SETTINGS["revisionsKept"],
                        help="unpinned revisions kept per file (default: %(default)s)")
    parser.add_argument("--revision-max-age-days", type=float, metavar="DAYS",
                        default=DEFAULT_SETTINGS["revisionMaxAgeDays"],
                        help="age after which an unpinned, superseded revision goes "
                             "(default: %(default)s)")
    parser.add_argument("--max-pinned-revisions", type=int, metavar="N",
                        default=DEFAULT_SETTINGS["maxPinnedRevisions"],
                        help="keepForever revisions a file may hold (default: %(default)s)")
    parser.add_argument("--max-page-size", type=int, metavar="N",
                        default=DEFAULT_SETTINGS["maxPageSize"],
                        help="most items a listing page holds (default: %(default)s)")
    parser.add_argument("--revision-downloads", choices=REVISION_DOWNLOAD_MODES,
                        default=DEFAULT_SETTINGS["revisionDownloads"],
                        help="which old revisions Drive serves (default: %(default)s)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--state-file", help="load state from and save it to this JSON file")
    parser.add_argument("--ignore-stdin", action="store_true",
                        help="keep running when standard input closes (for a background server; "
                             "stop it with SIGTERM)")
    options = parser.parse_args(argv)

    try:
        settings = checked_settings({
            "accessTokenLifetime": options.access_token_lifetime, "ifMatch": options.if_match,
            "revisionsKept": options.revisions_kept,
            "revisionMaxAgeDays": options.revision_max_age_days,
            "maxPinnedRevisions": options.max_pinned_revisions,
            "maxPageSize": options.max_page_size,
            "revisionDownloads": options.revision_downloads}, DEFAULT_SETTINGS)
    except ValueError as error:
        parser.error(str(error))
    state = State(options.client_id, options.client_secret, settings, options.device_client_id,
                  options.device_client_secret)
    if options.state_file and os.path.exists(options.state_file):
        state.load(options.state_file)
    server = Server(("127.0.0.1", options.port), Handler)
    base_url = f"http://127.0.0.1:{server.server_address[1]}"
    server.state = state
    server.oauth = OAuth(state)
    server.drive = Drive(state, server.oauth, base_url)
    server.control = Control(state, server.oauth)
    server.request_log = None
    if os.environ.get(REQUEST_LOG_VARIABLE):
        server.request_log = os.open(os.environ[REQUEST_LOG_VARIABLE],
                                     os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def stop(signum, frame):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # A parent may have spawned us with these blocked (a child inherits the signal mask).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    if not options.ignore_stdin:
        watch_stdin(server)
    print(f"LISTENING {base_url}", flush=True)
    server.serve_forever(poll_interval=0.2)
    server.server_close()
    if options.state_file:
        state.save(options.state_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
