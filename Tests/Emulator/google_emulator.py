#!/usr/bin/env python3
"""A local stand-in for Google's OAuth 2.0 and Drive endpoints, for tests and `make demo`.

Design note. One process, one port, standard library only, serving three families of paths:

    /o/oauth2/v2/auth, /token, /revoke      Google's OAuth endpoints for installed apps
    /drive/..., /upload/drive/...           the parts of Drive v3 (and v2 for If-Match) we use
    /__emulator/...                         a control API for tests (no auth, never logged)

It is an independent second implementation of the protocol the Swift client speaks, written
from Google's documentation (SPEC §6b), so it is deliberately strict where Google is strict:
`client_secret` required, single-use codes, PKCE S256 checked, a refresh answer without a
refresh token, no refresh token at all unless the authorization asked for
`access_type=offline`, app-folder files visible only with `spaces=appDataFolder`, default
`fields` as small as Drive's, `size`/`version` as strings, non-unique names, 412 on a stale
`If-Match`, 409 `fileIdInUse`, 308 + `Range` for resumable uploads.

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
                                  "name"?, "count"?, "at"?}: another device writes this (or
                                 each of these in turn) to the file; "at" says when:
                                 "write" (default) between our client's next read of it
                                 (listing, download or metadata) and its next write to it;
                                 "list" / "download" right after our next listing of it /
                                 download of its bytes is answered; "chunk" before our next
                                 chunk (not the last) of a resumable upload to it;
                                 {"clear": true} forgets one not yet spent
    POST /__emulator/deny        {"count"?}: the next authorization answers access_denied
    POST /__emulator/untick      {"scopes": [..]}: the next consent leaves these unticked (Google's
                                 granular consent); the redirect and the grant list the rest
    POST /__emulator/clock       {"offset": s}: skews the Date header and Drive's timestamps
    POST /__emulator/settings    any of {"accessTokenLifetime": s (tokens issued from now on),
                                  "ifMatch": "honour"|"open-only"|"ignore",
                                  "revisionsKept": N, "revisionMaxAgeDays": d}; answers
                                  every setting (GET too); 400 naming a bad one
    POST /__emulator/expire-access-tokens | revoke-all | expire-upload-sessions | reset
    GET  /__emulator/log         [{method, path, query (secrets REDACTED), status, fault?,
                                   grantType?, ifMatch?, revoked?, interleaved?, denied?,
                                   incomplete? (the client hung up mid-body: not handled),
                                   requestBytes, responseBytes (bodies only; a cut answer
                                   counts the half that was sent)}]
    GET  /__emulator/files       every file with metadata, etag, content and contentBase64
    POST /__emulator/files       {"name", "content" | "contentBase64", "parents"?, "id"?,
                                  "modifiedTime"?}: seed a file (names need not be unique)
    POST /__emulator/tokens      {"scope"?, "offline"?}: a grant without the browser dance,
                                 answered like /token (for Drive tests that need a token)
    GET  /__emulator/secrets     every secret issued or received (see below)

`reset` forgets files, tokens, faults and the log but not the list of secrets, and puts the
settings back to their start-up values (the command line's, else the defaults).

Switches for what Google does not document (settings above; command line in brackets):

    ifMatch [--if-match MODE]    where a v2 `If-Match` is checked: `honour` (default) at a
                                 one-request upload, when a resumable session opens and when
                                 it completes; `open-only` never when a session completes;
                                 `ignore` never. A stale etag answers 412 conditionNotMet.
    revisionsKept [--revisions-kept N]      unpinned revisions a file keeps (default 100):
                                 a content upload beyond that purges the oldest unpinned ones
    revisionMaxAgeDays [--revision-max-age-days D]   age (default 30, on the emulator's
                                 clock, which /__emulator/clock moves) past which an unpinned
                                 revision goes, counted from its own modifiedTime

Revisions: every content upload (create, media, multipart, resumable, v2 or v3) makes one;
a metadata change makes none but moves `version`, `modifiedTime` and the v2 etag. The head
revision and `keepForever` ones are never purged; `headRevisionId` names the head.

Tokens are random but recognisable (`ya29.emu-…`, `1//emu-…`, `4/emu-…`) and every secret
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

SCOPE_APPDATA = "https://www.googleapis.com/auth/drive.appdata"
SCOPE_DRIVE = "https://www.googleapis.com/auth/drive"
CHUNK_GRANULARITY = 256 * 1024
APP_FOLDER_ID = "0AEmuAppDataFolderUk9PVA"
CODE_LIFETIME = 600
# A resumable session's upload_id lets anyone holding the URI upload without a token.
SECRET_PARAMETERS = {
    "code", "token", "access_token", "refresh_token", "client_secret", "code_verifier",
    "upload_id",
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


def drive_error(status, reason, message, domain="global", location=None, location_type=None,
                headers=None):
    """Drive's error body: {"error": {"code", "message", "errors": [{domain, reason, message}]}}."""
    item = {"domain": domain, "reason": reason, "message": message}
    if location is not None:
        item["location"] = location
        item["locationType"] = location_type
    return Failure(json_reply(status, {"error": {
        "code": status, "message": message, "errors": [item]}}, headers))


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
    if path in ("/token", "/revoke"):
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
# Drive's `fields` selector and `q` language (the subset the client uses)


def parse_fields(text):
    """`nextPageToken,files(id,name)` -> {"nextPageToken": None, "files": {"id": None, ...}}."""
    position = 0

    def parse_list():
        nonlocal position
        selection = {}
        while position < len(text):
            match = re.compile(r"\s*([A-Za-z0-9_*]+)\s*").match(text, position)
            if not match:
                raise drive_error(400, "invalidParameter", f"Invalid field selection {text}",
                                  location="fields", location_type="parameter")
            position = match.end()
            name = match.group(1)
            sub = None
            if position < len(text) and text[position] == "(":
                position += 1
                sub = parse_list()
                if position >= len(text) or text[position] != ")":
                    raise drive_error(400, "invalidParameter", f"Invalid field selection {text}",
                                      location="fields", location_type="parameter")
                position += 1
            elif position < len(text) and text[position] == "/":
                position += 1
                inner = re.compile(r"([A-Za-z0-9_*]+)").match(text, position)
                if not inner:
                    raise drive_error(400, "invalidParameter", f"Invalid field selection {text}",
                                      location="fields", location_type="parameter")
                position = inner.end()
                sub = {inner.group(1): None}
            selection[name] = sub
            if position < len(text) and text[position] == ",":
                position += 1
                continue
            break
        return selection

    selection = parse_list()
    if position != len(text):
        raise drive_error(400, "invalidParameter", f"Invalid field selection {text}",
                          location="fields", location_type="parameter")
    return selection


def select(value, selection):
    if selection is None or "*" in selection:
        return value
    if isinstance(value, list):
        return [select(item, selection) for item in value]
    if not isinstance(value, dict):
        return value
    return {key: select(value[key], sub) for key, sub in selection.items() if key in value}


def split_and(q):
    """Splits a query on ` and ` outside quoted strings."""
    clauses, current, quoted, index = [], [], False, 0
    while index < len(q):
        char = q[index]
        if quoted and char == "\\" and index + 1 < len(q):
            current.append(q[index:index + 2])
            index += 2
            continue
        if char == "'":
            quoted = not quoted
        if not quoted and q[index:index + 5].lower() == " and ":
            clauses.append("".join(current))
            current = []
            index += 5
            continue
        current.append(char)
        index += 1
    if quoted:
        raise invalid_query(q)
    clauses.append("".join(current))
    return [clause.strip() for clause in clauses]


def invalid_query(q):
    return drive_error(400, "invalid", f"Invalid Value: cannot read q={q!r}", location="q",
                       location_type="parameter")


def unquote_query_string(text):
    return re.sub(r"\\(.)", r"\1", text)


def compile_query(q):
    """Returns a predicate over files for q forms like `name = 'x' and trashed = false`."""
    tests = []
    quoted = r"'((?:[^'\\]|\\.)*)'"
    for clause in split_and(q):
        if match := re.fullmatch(r"name\s*=\s*" + quoted, clause):
            name = unquote_query_string(match.group(1))
            tests.append(lambda f, name=name: f.name == name)
        elif match := re.fullmatch(r"trashed\s*=\s*(true|false)", clause):
            wanted = match.group(1) == "true"
            tests.append(lambda f, wanted=wanted: wanted is False)
        elif match := re.fullmatch(quoted + r"\s+in\s+parents", clause):
            parent = unquote_query_string(match.group(1))
            parent = APP_FOLDER_ID if parent == "appDataFolder" else parent
            tests.append(lambda f, parent=parent: parent in f.parents)
        elif match := re.fullmatch(r"mimeType\s*=\s*" + quoted, clause):
            mime = unquote_query_string(match.group(1))
            tests.append(lambda f, mime=mime: f.mime_type == mime)
        else:
            raise invalid_query(q)
    return lambda f: all(test(f) for test in tests)


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
        self.revisions = [r for r in self.revisions
                          if r is head or r.keep_forever or now - r.modified <= max_age]
        if uploaded:
            unpinned = [r for r in self.revisions if not r.keep_forever]
            doomed = {id(r) for r in unpinned[:max(0, len(unpinned) - kept)] if r is not head}
            self.revisions = [r for r in self.revisions if id(r) not in doomed]

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
        }

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
                "revisionCount": self.revision_count,
                "revisions": [revision.saved() for revision in self.revisions]}

    @classmethod
    def restored(cls, saved):
        revisions = [Revision.restored(r) for r in saved["revisions"]]
        file = cls(saved["id"], saved["name"], saved["mimeType"], saved["parents"],
                   revisions[-1].content, saved["created"])
        file.modified, file.version = saved["modified"], saved["version"]
        file.etag, file.revisions = saved["etag"], revisions
        file.revision_count = saved["revisionCount"]
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
DEFAULT_SETTINGS = {"accessTokenLifetime": 3600, "ifMatch": "honour", "revisionsKept": 100,
                    "revisionMaxAgeDays": 30}


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
    if type(kept) is not int or kept < 1:
        raise ValueError("revisionsKept must be a whole number, 1 or more")
    if type(age) not in (int, float) or age < 0:
        raise ValueError("revisionMaxAgeDays must be a number of days, 0 or more")
    return settings


class State:
    def __init__(self, client_id, client_secret, settings):
        self.lock = threading.RLock()
        self.client_id = client_id
        self.client_secret = client_secret
        self.startup_settings = checked_settings(settings, DEFAULT_SETTINGS)
        self.seen_secrets = [client_secret]
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
            self.clock_offset = 0.0
            self.log = []
            self.settings = dict(self.startup_settings)

    def now(self):
        return time.time() + self.clock_offset

    def write(self, file, content):
        """A content upload to `file`: a new head revision, then Google's retention."""
        file.write(content, self.now())
        self.purge_revisions(file, uploaded=True)

    def purge_revisions(self, file, uploaded=False):
        file.purge_revisions(self.now(), self.settings["revisionsKept"],
                             self.settings["revisionMaxAgeDays"] * 86400, uploaded)

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
        return self.interleave["name"] is None or self.interleave["name"] == file.name

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
        if client_id != self.state.client_id:
            raise oauth_error(401, "invalid_client", "The OAuth client was not found.")
        if not client_secret:
            raise oauth_error(400, "invalid_request", "client_secret is missing.")
        if client_secret != self.state.client_secret:
            raise oauth_error(401, "invalid_client", "Unauthorized")

    def token(self, form, authorization):
        state = self.state
        for key in ("code", "code_verifier", "refresh_token"):
            state.remember_secret(form.get(key))
        grant_type = form.get("grant_type", "")
        if grant_type not in ("authorization_code", "refresh_token"):
            raise oauth_error(400, "unsupported_grant_type", f"Invalid grant_type: {grant_type}")
        with state.lock:
            self.client_credentials(form, authorization)
            if grant_type == "authorization_code":
                return self.exchange_code(form)
            return self.refresh(form)

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

    def grant(self, scope, offline):
        """A new grant's token answer (with a refresh token only for offline access)."""
        state = self.state
        answer = {"expires_in": state.lifetime, "scope": scope, "token_type": "Bearer"}
        refresh_token = None
        if offline:
            refresh_token = random_id("1//emu-", 64)
            state.remember_secret(refresh_token)
            state.refresh_tokens[refresh_token] = {"scope": scope, "revoked": False}
            answer["refresh_token"] = refresh_token
        answer["access_token"] = self.issue_access_token(scope, refresh_token)
        return answer

    def refresh(self, form):
        state = self.state
        refresh_token = form.get("refresh_token")
        if not refresh_token:
            raise oauth_error(400, "invalid_request", "Missing required parameter: refresh_token")
        record = state.refresh_tokens.get(refresh_token)
        if record is None or record["revoked"]:
            raise oauth_error(400, "invalid_grant", "Token has been expired or revoked.")
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
            "expires": time.time() + self.state.lifetime, "revoked": False,
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
        if record is None or record["revoked"] or record["expires"] <= time.time():
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
    def fields(query, default):
        return parse_fields(query.get("fields") or default)

    def file_reply(self, status, file, query, extra_headers=None):
        selection = self.fields(query, "kind,id,name,mimeType")
        return json_reply(status, select(file.v3(), selection), extra_headers)

    def v2_reply(self, status, file):
        return json_reply(status, file.v2(), [("ETag", file.etag)])

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
        if path == "/drive/v3/files" and method == "GET":
            return self.list(token, query)
        if path == "/drive/v3/files/generateIds" and method == "GET":
            return self.generate_ids(query)
        if "upload_id" in query and method in ("PUT", "POST"):
            return self.session_chunk(query, headers, body)
        if path == "/upload/drive/v3/files" and method == "POST":
            return self.create(token, query, headers, body)
        if match := re.fullmatch(r"/upload/drive/v3/files/([^/]+)", path):
            if method == "PATCH":
                return self.update(match.group(1), query, headers, body, v2=False)
        if match := re.fullmatch(r"/upload/drive/v2/files/([^/]+)", path):
            if method == "PUT":
                return self.update(match.group(1), query, headers, body, v2=True)
        if match := re.fullmatch(r"/drive/v3/files/([^/]+)/revisions", path):
            if method == "GET":
                return self.revisions(match.group(1), query)
        if match := re.fullmatch(r"/drive/v3/files/([^/]+)/revisions/([^/]+)", path):
            return self.revision(method, match.group(1), match.group(2), query, body)
        if match := re.fullmatch(r"/drive/v3/files/([^/]+)", path):
            file_id = match.group(1)
            if method == "GET":
                return self.get(file_id, query)
            if method == "DELETE":
                return self.delete(file_id)
            if method == "PATCH":
                return self.patch_metadata(file_id, query, body)
        if match := re.fullmatch(r"/drive/v2/files/([^/]+)", path):
            if method == "GET":
                file = self.file(match.group(1))
                self.state.note_read(file)
                return self.v2_reply(200, file)
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
        selection = self.fields(query, "kind,incompleteSearch,nextPageToken,files(kind,id,name,mimeType)")
        reply = json_reply(200, select(answer, selection))
        # After the answer is made: the other device writes once our client has listed.
        reply.note["interleaved"] = any([state.interleave_at(file, "list") for file in page])
        return reply

    @staticmethod
    def page(items, query, default_size, scope):
        """One page of `items` by `pageSize` and `pageToken`, and the next page's token; a
        token only works for the listing (`scope`) that issued it."""
        try:
            page_size = int(query.get("pageSize", default_size))
        except ValueError:
            page_size = 0
        if not 1 <= page_size <= 1000:
            raise drive_error(400, "invalid", "Invalid Value", location="pageSize",
                              location_type="parameter")
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

    def generate_ids(self, query):
        space = query.get("space", "drive")
        if space not in ("drive", "appDataFolder"):
            raise drive_error(400, "invalid", "Invalid Value", location="space",
                              location_type="parameter")
        try:
            count = int(query.get("count", "10"))
        except ValueError:
            count = 0
        if not 1 <= count <= 1000:
            raise drive_error(400, "invalid", "Invalid Value", location="count",
                              location_type="parameter")
        ids = [random_id("1", 32) for _ in range(count)]
        for file_id in ids:
            self.state.generated_ids[file_id] = space
        return json_reply(200, {"kind": "drive#generatedIds", "space": space, "ids": ids})

    def get(self, file_id, query):
        file = self.file(file_id)
        self.state.note_read(file)
        if query.get("alt") == "media":
            reply = self.media_reply(file.content, file.mime_type)
            reply.note["interleaved"] = self.state.interleave_at(file, "download")
            return reply
        return self.file_reply(200, file, query)

    @staticmethod
    def media_reply(content, mime_type):
        reply = Reply(200, content, mime_type,
                      [("X-Goog-Hash", "md5=" + base64.b64encode(
                          hashlib.md5(content).digest()).decode())])
        reply.note["download"] = True
        return reply

    def delete(self, file_id):
        self.file(file_id)
        del self.state.files[file_id]
        return Reply(204)

    def patch_metadata(self, file_id, query, body):
        file = self.file(file_id)
        metadata = self.json_metadata(body)
        if "name" in metadata:
            file.name = metadata["name"]
            file.touch(self.state.now())
        return self.file_reply(200, file, query)

    def revisions(self, file_id, query):
        file = self.file(file_id)
        self.state.purge_revisions(file)
        page, next_token = self.page(file.revisions, query, 200, file_id)
        answer = {"kind": "drive#revisionList", "revisions": [r.v3() for r in page]}
        if next_token:
            answer["nextPageToken"] = next_token
        selection = self.fields(query, "kind,nextPageToken,revisions(kind,id,mimeType,modifiedTime)")
        return json_reply(200, select(answer, selection))

    def revision(self, method, file_id, revision_id, query, body):
        file = self.file(file_id)
        self.state.purge_revisions(file)
        revision = file.revision(revision_id)
        if method == "GET" and query.get("alt") == "media":
            return self.media_reply(revision.content, revision.mime_type)
        if method == "GET":
            return self.revision_reply(revision, query)
        if method == "PATCH":
            metadata = self.json_metadata(body)
            if "keepForever" in metadata:
                if not isinstance(metadata["keepForever"], bool):
                    raise drive_error(400, "invalid", "Invalid value for keepForever.",
                                      location="keepForever", location_type="other")
                revision.keep_forever = metadata["keepForever"]
            return self.revision_reply(revision, query)
        if method == "DELETE":
            if file.delete_revision(revision_id):
                file.touch(self.state.now())
            return Reply(204)
        raise drive_error(404, "notFound", f"No such endpoint: {method} revisions")

    def revision_reply(self, revision, query):
        selection = self.fields(query, "kind,id,mimeType,modifiedTime")
        return json_reply(200, select(revision.v3(), selection))

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
    def multipart(headers, body):
        """multipart/related: a JSON metadata part, then the media part."""
        content_type = headers.get("Content-Type", "")
        match = re.search(r'boundary="?([^";]+)"?', content_type)
        if not content_type.lower().startswith("multipart/related") or not match:
            raise drive_error(400, "badContent",
                              "Multipart uploads need Content-Type: multipart/related; boundary=…")
        delimiter = b"--" + match.group(1).encode()
        pieces = body.split(delimiter)
        parts = []
        for piece in pieces[1:]:
            if piece.startswith(b"--"):
                break
            if piece.startswith(b"\r\n"):
                piece = piece[2:]
            head, separator, content = piece.partition(b"\r\n\r\n")
            if not separator:
                raise drive_error(400, "badContent", "Malformed multipart body.")
            if content.endswith(b"\r\n"):
                content = content[:-2]
            part_type = None
            for line in head.decode("latin-1").split("\r\n"):
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-type":
                    part_type = value.strip()
            parts.append((part_type, content))
        if len(parts) != 2:
            raise drive_error(400, "badContent",
                              f"Multipart body must have 2 parts (metadata, media), found {len(parts)}.")
        return Drive.json_metadata(parts[0][1]), parts[1][1], parts[1][0]

    def create(self, token, query, headers, body):
        upload_type = query.get("uploadType")
        if upload_type == "media":
            file = self.new_file(token, {}, body, headers.get("Content-Type"))
            return self.file_reply(200, file, query)
        if upload_type == "multipart":
            metadata, content, media_type = self.multipart(headers, body)
            file = self.new_file(token, metadata, content, media_type)
            return self.file_reply(200, file, query)
        if upload_type == "resumable":
            metadata = self.json_metadata(body)
            self.create_plan(token, metadata)
            metadata.setdefault("mimeType", headers.get("X-Upload-Content-Type"))
            session = UploadSession("create", metadata, None, self.declared_length(headers),
                                    None, query.get("fields"), False, token)
            return self.open_session(session, "/upload/drive/v3/files")
        raise drive_error(400, "invalid", "Invalid Value", location="uploadType",
                          location_type="parameter")

    def update(self, file_id, query, headers, body, v2):
        file = self.file(file_id)
        upload_type = query.get("uploadType")
        if_match = headers.get("If-Match") if v2 else None
        if upload_type == "media":
            interleaved = self.write_content(file, body, if_match)
            reply = self.v2_reply(200, file) if v2 else self.file_reply(200, file, query)
            reply.note["interleaved"] = interleaved
            return reply
        if upload_type == "multipart" and not v2:
            metadata, content, media_type = self.multipart(headers, body)
            interleaved = self.write_content(file, content)
            if metadata.get("name"):
                file.name = metadata["name"]
            reply = self.file_reply(200, file, query)
            reply.note["interleaved"] = interleaved
            return reply
        if upload_type == "resumable":
            self.check_if_match(file, if_match, "open")
            session = UploadSession("update", self.json_metadata(body), file_id,
                                    self.declared_length(headers), if_match,
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
            if session.metadata.get("name"):
                file.name = session.metadata["name"]
        session.result = file.id
        session.received = bytearray()
        reply = self.session_result(session)
        reply.note["interleaved"] = interleaved
        return reply

    def session_result(self, session):
        file = self.file(session.result)
        if session.v2:
            return self.v2_reply(200, file)
        return self.file_reply(200, file, {"fields": session.fields} if session.fields else {})


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
                if at not in ("write", "list", "download", "chunk"):
                    return json_reply(400, {"error": f"unknown interleave point '{at}'"})
                # A list makes a device that writes something new each time, in turn.
                contents = ([base64.b64decode(item) for item in data["contentsBase64"]]
                            if "contentsBase64" in data else [self.content_of(data)])
                state.interleave = {"contents": contents, "name": data.get("name"),
                                    "remaining": int(data.get("count", len(contents))),
                                    "armed": set(), "at": at, "written": 0}
                return json_reply(200, {"armed": True})
            if name == "deny" and method == "POST":
                state.deny_next += int(data.get("count", 1))
                return json_reply(200, {"denyNext": state.deny_next})
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
                    return server.oauth.token(form, headers.get("Authorization"))
                return server.oauth.revoke(form, query)
            if path.startswith("/drive/") or path.startswith("/upload/drive/"):
                with server.state.lock:
                    return server.drive.route(method, path, query, headers, body)
            raise drive_error(404, "notFound", f"No such endpoint: {method} {path}")
        except Failure as failure:
            return failure.reply
        except Exception:  # a bug in the emulator: answer 500 and show it on stderr
            traceback.print_exc()
            return drive_error(500, "backendError", "Emulator bug; see its stderr.").reply

    def append_log(self, entry):
        with self.server.state.lock:
            self.server.state.log.append(entry)

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
            "revisionMaxAgeDays": options.revision_max_age_days}, DEFAULT_SETTINGS)
    except ValueError as error:
        parser.error(str(error))
    state = State(options.client_id, options.client_secret, settings)
    if options.state_file and os.path.exists(options.state_file):
        state.load(options.state_file)
    server = Server(("127.0.0.1", options.port), Handler)
    base_url = f"http://127.0.0.1:{server.server_address[1]}"
    server.state = state
    server.oauth = OAuth(state)
    server.drive = Drive(state, server.oauth, base_url)
    server.control = Control(state, server.oauth)

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
