"""Protocol tests for google_emulator.py: the behaviours of Google's services that the Swift
client relies on (FORMAT.md §9.2), pinned so the emulator cannot drift into being lenient.

Run: python3 -m unittest discover -s Tests/Emulator  (EmulatorSelfTests.swift does this).
"""

import base64
import hashlib
import http.client
import http.server
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import unittest
import urllib.parse
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

HERE = os.path.dirname(os.path.abspath(__file__))
EMULATOR = os.path.join(HERE, "google_emulator.py")
BROWSER = os.path.join(HERE, "fake_browser.py")
SCOPE = "https://www.googleapis.com/auth/drive.appdata"
CHUNK = 256 * 1024


def start_emulator(*arguments, environment=None):
    """An emulator on a free port. It never joins the request sweep's log unless asked (these
    tests send Google-invalid requests on purpose)."""
    if environment is None:
        environment = {k: v for k, v in os.environ.items() if k != "GOOGLE_EMULATOR_REQUEST_LOG"}
    process = subprocess.Popen([sys.executable, EMULATOR, *arguments], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, env=environment)
    line = process.stdout.readline().decode()
    if not line.startswith("LISTENING http://127.0.0.1:"):
        process.kill()
        raise RuntimeError(f"the emulator said {line!r}")
    return process, line.split()[1]


class Client:
    """A tiny HTTP client that never follows redirects and keeps one connection."""

    def __init__(self, base):
        parts = urllib.parse.urlsplit(base)
        self.host, self.port = parts.hostname, parts.port

    def request(self, method, path, body=None, headers=None, form=None, json_body=None):
        headers = dict(headers or {})
        if form is not None:
            body = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if json_body is not None:
            body = json.dumps(json_body).encode()
            headers["Content-Type"] = "application/json; charset=UTF-8"
        connection = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, data
        finally:
            connection.close()

    def json(self, method, path, **kwargs):
        status, headers, data = self.request(method, path, **kwargs)
        return status, headers, (json.loads(data) if data else None)


def pkce_pair():
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


class EmulatorTestCase(unittest.TestCase):
    extra_arguments = ()

    @classmethod
    def setUpClass(cls):
        cls.process, cls.base = start_emulator(*cls.extra_arguments)
        cls.client = Client(cls.base)

    @classmethod
    def tearDownClass(cls):
        cls.process.stdin.close()
        cls.process.wait(timeout=10)
        cls.process.stdout.close()

    def setUp(self):
        self.client.request("POST", "/__emulator/reset")

    def authorize(self, redirect="http://127.0.0.1:5/cb", offline=True, **overrides):
        verifier, challenge = pkce_pair()
        query = {
            "client_id": "test-client-id", "redirect_uri": redirect, "response_type": "code",
            "scope": SCOPE, "state": "s-123", "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        if offline:
            query["access_type"] = "offline"
        query.update(overrides)
        query = {key: value for key, value in query.items() if value is not None}
        status, headers, body = self.client.request(
            "GET", "/o/oauth2/v2/auth?" + urllib.parse.urlencode(query))
        return status, headers, body, verifier

    def code_from(self, headers):
        location = urllib.parse.urlsplit(headers["location"])
        return urllib.parse.parse_qs(location.query)

    def exchange(self, issued_code, verifier, redirect="http://127.0.0.1:5/cb", **overrides):
        form = {"grant_type": "authorization_code", "code": issued_code, "code_verifier": verifier,
                "client_id": "test-client-id", "client_secret": "test-client-secret",
                "redirect_uri": redirect}
        form.update(overrides)
        form = {key: value for key, value in form.items() if value is not None}
        return self.client.json("POST", "/token", form=form)

    def login(self):
        _, headers, _, verifier = self.authorize()
        status, _, answer = self.exchange(self.code_from(headers)["code"][0], verifier)
        self.assertEqual(status, 200, answer)
        return answer

    def bearer(self, token):
        return {"Authorization": f"Bearer {token}"}


class OAuthTests(EmulatorTestCase):
    def test_authorization_redirects_to_loopback_with_code_state_and_scope(self):
        status, headers, _, _ = self.authorize(redirect="http://127.0.0.1:49152/callback")
        self.assertEqual(status, 302)
        self.assertTrue(headers["location"].startswith("http://127.0.0.1:49152/callback?"))
        query = self.code_from(headers)
        self.assertEqual(query["state"], ["s-123"])
        self.assertEqual(query["scope"], [SCOPE])
        self.assertTrue(query["code"][0].startswith("4/emu-"))

    def test_authorization_refusals_are_error_pages(self):
        cases = [
            ({"client_id": "someone-else"}, 401, "invalid_client"),
            ({"redirect_uri": "https://example.com/cb"}, 400, "redirect_uri_mismatch"),
            ({"redirect_uri": "http://192.168.1.2:80/cb"}, 400, "redirect_uri_mismatch"),
            ({"response_type": "token"}, 400, "invalid_request"),
            ({"scope": "openid"}, 400, "invalid_scope"),
            ({"code_challenge": None}, 400, "invalid_request"),
            ({"code_challenge_method": "plain"}, 400, "invalid_request"),
            ({"code_challenge": "short"}, 400, "invalid_request"),
        ]
        for overrides, expected_status, error in cases:
            with self.subTest(overrides=overrides):
                status, headers, body, _ = self.authorize(**overrides)
                self.assertEqual(status, expected_status)
                self.assertNotIn("location", headers)
                self.assertIn(error, body.decode())

    def test_localhost_and_any_port_are_accepted(self):
        for redirect in ("http://localhost:8080/", "http://127.0.0.1:1/x/y", "http://[::1]:9/"):
            with self.subTest(redirect=redirect):
                status, _, _, _ = self.authorize(redirect=redirect)
                self.assertEqual(status, 302)

    def test_denial_redirects_with_access_denied_and_state(self):
        self.client.request("POST", "/__emulator/deny")
        status, headers, _, _ = self.authorize()
        self.assertEqual(status, 302)
        query = self.code_from(headers)
        self.assertEqual(query["error"], ["access_denied"])
        self.assertEqual(query["state"], ["s-123"])
        self.assertNotIn("code", query)
        status, headers, _, _ = self.authorize()
        self.assertIn("code", self.code_from(headers), "a denial applies to one request only")

    def test_exchange_answers_tokens_and_the_code_is_single_use(self):
        _, headers, _, verifier = self.authorize()
        code = self.code_from(headers)["code"][0]
        status, response_headers, answer = self.exchange(code, verifier)
        self.assertEqual(status, 200)
        self.assertEqual(set(answer), {"access_token", "expires_in", "refresh_token", "scope",
                                       "token_type"})
        self.assertEqual(answer["token_type"], "Bearer")
        self.assertEqual(answer["expires_in"], 3600)
        self.assertIn("no-store", response_headers["cache-control"])
        status, _, again = self.exchange(code, verifier)
        self.assertEqual((status, again["error"]), (400, "invalid_grant"))

    def test_no_refresh_token_without_offline_access(self):
        _, headers, _, verifier = self.authorize(offline=False)
        status, _, answer = self.exchange(self.code_from(headers)["code"][0], verifier)
        self.assertEqual(status, 200)
        self.assertNotIn("refresh_token", answer)

    def test_pkce_verifier_is_checked_and_a_failed_attempt_burns_the_code(self):
        _, headers, _, verifier = self.authorize()
        code = self.code_from(headers)["code"][0]
        other, _ = pkce_pair()
        status, _, answer = self.exchange(code, other)
        self.assertEqual((status, answer["error"]), (400, "invalid_grant"))
        self.assertEqual(answer["error_description"], "Invalid code verifier.")
        status, _, answer = self.exchange(code, verifier)
        self.assertEqual((status, answer["error"]), (400, "invalid_grant"))

    def test_exchange_refusals(self):
        cases = [
            ({"code_verifier": None}, 400, "invalid_grant"),
            ({"client_secret": None}, 400, "invalid_request"),
            ({"client_secret": "wrong"}, 401, "invalid_client"),
            ({"client_id": "someone-else"}, 401, "invalid_client"),
            ({"redirect_uri": "http://127.0.0.1:6/cb"}, 400, "redirect_uri_mismatch"),
            ({"grant_type": "password"}, 400, "unsupported_grant_type"),
            ({"code": "4/not-issued"}, 400, "invalid_grant"),
        ]
        for overrides, expected_status, error in cases:
            with self.subTest(overrides=overrides):
                _, headers, _, verifier = self.authorize()
                code = self.code_from(headers)["code"][0]
                status, _, answer = self.exchange(code, verifier, **overrides)
                self.assertEqual((status, answer["error"]), (expected_status, error))
                self.assertIn("error_description", answer)

    def test_refresh_answers_a_new_access_token_without_a_refresh_token(self):
        tokens = self.login()
        status, _, answer = self.client.json("POST", "/token", form={
            "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
            "client_id": "test-client-id", "client_secret": "test-client-secret"})
        self.assertEqual(status, 200)
        self.assertNotIn("refresh_token", answer)
        self.assertNotEqual(answer["access_token"], tokens["access_token"])
        status, _, _ = self.client.request("GET", "/drive/v3/files?spaces=appDataFolder",
                                           headers=self.bearer(answer["access_token"]))
        self.assertEqual(status, 200)

    def test_revoked_refresh_token_is_invalid_grant(self):
        tokens = self.login()
        status, _, answer = self.client.json("POST", "/revoke",
                                             form={"token": tokens["refresh_token"]})
        self.assertEqual((status, answer), (200, {}))
        status, _, answer = self.client.json("POST", "/token", form={
            "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
            "client_id": "test-client-id", "client_secret": "test-client-secret"})
        self.assertEqual(answer, {"error": "invalid_grant",
                                  "error_description": "Token has been expired or revoked."})
        self.assertEqual(status, 400)
        status, _, _ = self.client.request("GET", "/drive/v3/files?spaces=appDataFolder",
                                           headers=self.bearer(tokens["access_token"]))
        self.assertEqual(status, 401, "revoking the refresh token revokes its access tokens")
        status, _, answer = self.client.json("POST", "/revoke",
                                             form={"token": tokens["refresh_token"]})
        self.assertEqual((status, answer["error"]), (400, "invalid_token"))
        revocations = [entry for entry in self.log() if entry["path"] == "/revoke"]
        self.assertEqual([entry.get("revoked", False) for entry in revocations], [True, False])

    def test_expired_access_token_answers_401_in_drive_shape(self):
        tokens = self.login()
        self.client.request("POST", "/__emulator/expire-access-tokens")
        status, headers, answer = self.client.json(
            "GET", "/drive/v3/files?spaces=appDataFolder", headers=self.bearer(tokens["access_token"]))
        self.assertEqual(status, 401)
        self.assertIn("invalid_token", headers["www-authenticate"])
        self.assertEqual(answer["error"]["code"], 401)
        self.assertEqual(answer["error"]["errors"][0]["reason"], "authError")

    def test_log_redacts_secrets_and_secrets_lists_them(self):
        tokens = self.login()
        log_text = json.dumps(self.log())
        _, _, listed = self.client.json("GET", "/__emulator/secrets")
        self.assertIn("test-client-secret", listed)
        for secret in (tokens["access_token"], tokens["refresh_token"]):
            self.assertIn(secret, listed)
            self.assertNotIn(secret, log_text)
        self.assertNotIn("test-client-secret", log_text)

    def log(self):
        return self.client.json("GET", "/__emulator/log")[2]


class GrantLifecycleTests(EmulatorTestCase):
    def test_revoke_all_kills_every_grant(self):
        first, second = self.login(), self.login()
        self.client.request("POST", "/__emulator/revoke-all")
        for tokens in (first, second):
            status, _, answer = self.client.json("POST", "/token", form={
                "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
                "client_id": "test-client-id", "client_secret": "test-client-secret"})
            self.assertEqual((status, answer["error"]), (400, "invalid_grant"))

    def test_revoking_an_access_token_revokes_its_grant(self):
        tokens = self.login()
        status, _, _ = self.client.json("POST", "/revoke", form={"token": tokens["access_token"]})
        self.assertEqual(status, 200)
        status, _, answer = self.client.json("POST", "/token", form={
            "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
            "client_id": "test-client-id", "client_secret": "test-client-secret"})
        self.assertEqual((status, answer["error"]), (400, "invalid_grant"))

    def test_control_tokens_grant_works_for_drive_and_refresh(self):
        _, _, tokens = self.client.json("POST", "/__emulator/tokens")
        status, _, _ = self.client.request("GET", "/drive/v3/files?spaces=appDataFolder",
                                           headers=self.bearer(tokens["access_token"]))
        self.assertEqual(status, 200)
        status, _, _ = self.client.json("POST", "/token", form={
            "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
            "client_id": "test-client-id", "client_secret": "test-client-secret"})
        self.assertEqual(status, 200)

    def test_lifetime_setting_applies_to_new_tokens(self):
        self.client.request("POST", "/__emulator/settings", json_body={"accessTokenLifetime": 5})
        self.assertEqual(self.login()["expires_in"], 5)


class DeviceFlowTests(EmulatorTestCase):
    """RFC 8628 with Google's field names, and the control API's user and switches."""

    DEVICE = {"client_id": "test-device-client-id", "client_secret": "test-device-client-secret"}

    def device_code(self, client_id="test-device-client-id"):
        return self.client.json("POST", "/device/code",
                                form={"client_id": client_id, "scope": SCOPE})

    def poll(self, device_code, **overrides):
        form = dict(self.DEVICE, device_code=device_code,
                    grant_type="urn:ietf:params:oauth:grant-type:device_code")
        form.update(overrides)
        return self.client.json("POST", "/token", form=form)

    def control(self, **body):
        return self.client.json("POST", "/__emulator/device", json_body=body)

    def test_a_code_answers_googles_fields_and_polls_until_the_user_allows(self):
        self.client.request("POST", "/__emulator/settings", json_body={"deviceInterval": 1})
        status, _, answer = self.device_code()
        self.assertEqual(status, 200)
        self.assertEqual(sorted(answer), ["device_code", "expires_in", "interval", "user_code",
                                          "verification_url"])
        self.assertEqual((answer["interval"], answer["verification_url"]),
                         (1, "https://www.google.com/device"))
        status, _, pending = self.poll(answer["device_code"])
        self.assertEqual((status, pending["error"]), (428, "authorization_pending"))
        status, _, _ = self.control(userCode=answer["user_code"])
        self.assertEqual(status, 200)
        status, _, grant = self.poll(answer["device_code"])
        self.assertEqual(status, 200)
        self.assertIn("refresh_token", grant)
        # Spent: a second poll gets nothing.
        status, _, again = self.poll(answer["device_code"])
        self.assertEqual((status, again["error"]), (400, "invalid_grant"))
        # The refresh token belongs to the device client.
        refresh = {"grant_type": "refresh_token", "refresh_token": grant["refresh_token"]}
        status, _, _ = self.client.json("POST", "/token", form=dict(self.DEVICE, **refresh))
        self.assertEqual(status, 200)
        status, _, other = self.client.json("POST", "/token", form=dict(
            refresh, client_id="test-client-id", client_secret="test-client-secret"))
        self.assertEqual((status, other["error"]), (401, "unauthorized_client"))
        _, _, secrets_seen = self.client.json("GET", "/__emulator/secrets")
        self.assertIn(answer["device_code"], secrets_seen)
        self.assertNotIn(answer["user_code"], secrets_seen)

    def test_switches_slow_down_deny_expire_and_approve_after_polls(self):
        _, _, answer = self.device_code()
        self.control(slowDown=1, approveAfterPolls=1)
        self.assertEqual(self.poll(answer["device_code"])[2]["error"], "slow_down")
        self.assertEqual(self.poll(answer["device_code"])[2]["error"], "authorization_pending")
        self.assertEqual(self.poll(answer["device_code"])[0], 200)
        self.control(approveAfterPolls=None)
        for switch, status, error in (("deny", 403, "access_denied"),
                                      ("expire", 400, "expired_token")):
            _, _, answer = self.device_code()
            self.control(**{switch: True})
            got, _, refused = self.poll(answer["device_code"])
            self.assertEqual((got, refused["error"]), (status, error))

    def test_invalid_scope_switch_and_client_types(self):
        self.control(invalidScope=True)
        status, _, answer = self.device_code()
        self.assertEqual((status, answer["error"]), (400, "invalid_scope"))
        self.control(invalidScope=False)
        status, _, answer = self.device_code(client_id="test-client-id")
        self.assertEqual((status, answer["error"]), (401, "invalid_client"))
        _, _, answer = self.device_code()
        status, _, refused = self.poll(answer["device_code"], client_id="test-client-id",
                                       client_secret="test-client-secret")
        self.assertEqual((status, refused["error"]), (401, "unauthorized_client"))
        status, _, _ = self.control(userCode="NOT-A-CODE")
        self.assertEqual(status, 404)


class ShortLivedTokenTests(EmulatorTestCase):
    extra_arguments = ("--access-token-lifetime", "0")

    def test_tokens_expire_after_the_configured_lifetime(self):
        tokens = self.login()
        self.assertEqual(tokens["expires_in"], 0)
        status, _, _ = self.client.request("GET", "/drive/v3/files?spaces=appDataFolder",
                                           headers=self.bearer(tokens["access_token"]))
        self.assertEqual(status, 401)


class DriveTestCase(EmulatorTestCase):
    def setUp(self):
        super().setUp()
        self.token = self.login()["access_token"]
        self.auth = self.bearer(self.token)

    def list_named(self, name, fields="files(id,name,size,version,md5Checksum,parents)", **extra):
        query = {"spaces": "appDataFolder", "q": f"name = '{name}' and trashed = false",
                 "fields": fields, **extra}
        return self.client.json("GET", "/drive/v3/files?" + urllib.parse.urlencode(query),
                                headers=self.auth)

    def new_id(self):
        status, _, answer = self.client.json(
            "GET", "/drive/v3/files/generateIds?space=appDataFolder&count=1", headers=self.auth)
        self.assertEqual(status, 200)
        return answer["ids"][0]

    def create_multipart(self, name, content, file_id=None, parents=("appDataFolder",)):
        metadata = {"name": name, "parents": list(parents), "mimeType": "application/json"}
        if file_id:
            metadata["id"] = file_id
        boundary = "b0undary"
        body = (f"--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n"
                f"{json.dumps(metadata)}\r\n--{boundary}\r\nContent-Type: application/json\r\n\r\n"
                ).encode() + content + f"\r\n--{boundary}--\r\n".encode()
        headers = {"Content-Type": f"multipart/related; boundary={boundary}", **self.auth}
        return self.client.json("POST", "/upload/drive/v3/files?uploadType=multipart",
                                body=body, headers=headers)

    def seed(self, name, content):
        return self.client.json("POST", "/__emulator/files",
                                json_body={"name": name, "content": content})[2]


class DriveTests(DriveTestCase):
    def test_every_answer_has_a_date_header_and_the_clock_can_be_skewed(self):
        _, headers, _ = self.client.request("GET", "/drive/v3/files?spaces=appDataFolder",
                                            headers=self.auth)
        before = parsedate_to_datetime(headers["date"])
        self.assertLess(abs((before - datetime.now(timezone.utc)).total_seconds()), 60)
        self.client.request("POST", "/__emulator/clock", json_body={"offset": 3600})
        _, headers, _ = self.client.request("GET", "/nowhere")
        skewed = parsedate_to_datetime(headers["date"])
        self.assertGreater((skewed - datetime.now(timezone.utc)).total_seconds(), 3500)

    def test_missing_credentials_answer_401_required(self):
        status, _, answer = self.client.json("GET", "/drive/v3/files?spaces=appDataFolder")
        self.assertEqual(status, 401)
        self.assertEqual(set(answer["error"]), {"code", "message", "errors", "status"})
        self.assertEqual(answer["error"]["errors"][0]["reason"], "required")
        self.assertEqual(answer["error"]["status"], "UNAUTHENTICATED")

    def test_create_with_generated_id_then_list_download_and_409_on_retry(self):
        file_id = self.new_id()
        content = b'{"format":"habit-backup"}\n'
        status, _, created = self.create_multipart("habit-backup.json", content, file_id)
        self.assertEqual(status, 200)
        self.assertEqual(created, {"kind": "drive#file", "id": file_id,
                                   "name": "habit-backup.json", "mimeType": "application/json"})
        status, _, again = self.create_multipart("habit-backup.json", content, file_id)
        self.assertEqual(status, 409)
        self.assertEqual(again["error"]["errors"][0]["reason"], "fileIdInUse")
        status, _, listing = self.list_named("habit-backup.json")
        self.assertEqual(status, 200)
        [entry] = listing["files"]
        self.assertEqual(entry["size"], str(len(content)))
        self.assertEqual(entry["version"], "1")
        self.assertIsInstance(entry["version"], str)
        self.assertEqual(entry["md5Checksum"], hashlib.md5(content).hexdigest())
        self.assertNotEqual(entry["parents"], ["appDataFolder"], "Drive answers the folder's real id")
        status, _, data = self.client.request("GET", f"/drive/v3/files/{file_id}?alt=media",
                                              headers=self.auth)
        self.assertEqual((status, data), (200, content))

    def test_an_id_not_generated_is_not_usable(self):
        status, _, answer = self.create_multipart("x.json", b"{}", "1" + "a" * 32)
        self.assertEqual((status, answer["error"]["errors"][0]["reason"]), (400, "fileIdNotUsable"))

    def test_app_folder_files_are_invisible_without_spaces(self):
        self.seed("habit-backup.json", "{}")
        status, _, answer = self.client.json(
            "GET", "/drive/v3/files?q=" + urllib.parse.quote("name = 'habit-backup.json'"),
            headers=self.auth)
        self.assertEqual(status, 403, "an appdata-only token may not search the drive space")
        self.assertEqual(answer["error"]["errors"][0]["reason"], "insufficientScopes")

    def test_duplicates_by_name_are_listed_and_paginated(self):
        ids = {self.seed("habit-backup.json", str(n))["id"] for n in range(5)}
        self.seed("other.json", "{}")
        seen, token, pages = set(), None, 0
        while True:
            extra = {"pageSize": 2, **({"pageToken": token} if token else {})}
            status, _, page = self.list_named("habit-backup.json", "nextPageToken,files(id)", **extra)
            self.assertEqual(status, 200)
            pages += 1
            seen |= {entry["id"] for entry in page["files"]}
            token = page.get("nextPageToken")
            if not token:
                break
        self.assertEqual((seen, pages), (ids, 3))

    def test_default_fields_are_minimal(self):
        self.seed("habit-backup.json", "{}")
        _, _, listing = self.client.json(
            "GET", "/drive/v3/files?spaces=appDataFolder", headers=self.auth)
        self.assertEqual(set(listing["files"][0]), {"kind", "id", "name", "mimeType"})

    def test_query_with_escaped_quote_and_unknown_clause(self):
        self.seed("it's.json", "{}")
        status, _, listing = self.list_named("it\\'s.json")
        self.assertEqual((status, len(listing["files"])), (200, 1))
        status, _, _ = self.client.json(
            "GET", "/drive/v3/files?spaces=appDataFolder&q=" + urllib.parse.quote("fullText contains 'x'"),
            headers=self.auth)
        self.assertEqual(status, 400)

    def test_v2_etag_and_if_match_compare_and_swap(self):
        file_id = self.seed("habit-backup.json", "one")["id"]
        status, headers, meta = self.client.json("GET", f"/drive/v2/files/{file_id}", headers=self.auth)
        self.assertEqual(status, 200)
        self.assertEqual(headers["etag"], meta["etag"])
        etag = meta["etag"]
        put = f"/upload/drive/v2/files/{file_id}?uploadType=media"
        status, headers, written = self.client.json(
            "PUT", put, body=b"two", headers={"If-Match": etag, **self.auth})
        self.assertEqual(status, 200)
        self.assertNotEqual(written["etag"], etag, "a content write changes the etag")
        status, _, stale = self.client.json(
            "PUT", put, body=b"three", headers={"If-Match": etag, **self.auth})
        self.assertEqual(status, 412)
        self.assertEqual(stale["error"]["errors"][0]["reason"], "conditionNotMet")
        _, _, data = self.client.request("GET", f"/drive/v3/files/{file_id}?alt=media", headers=self.auth)
        self.assertEqual(data, b"two")

    def test_an_upload_interrupted_mid_body_changes_nothing(self):
        file_id = self.seed("habit-backup.json", "original")["id"]
        with socket.create_connection((self.client.host, self.client.port)) as connection:
            connection.sendall((f"PUT /upload/drive/v2/files/{file_id}?uploadType=media HTTP/1.1\r\n"
                                f"Host: x\r\nAuthorization: Bearer {self.token}\r\n"
                                f"Content-Length: 1000\r\n\r\n").encode() + b"partial")
            connection.shutdown(socket.SHUT_WR)
            self.assertEqual(connection.recv(100), b"", "no answer to a request cut mid-body")
        _, _, data = self.client.request("GET", f"/drive/v3/files/{file_id}?alt=media", headers=self.auth)
        self.assertEqual(data, b"original")
        log = self.client.json("GET", "/__emulator/log")[2]
        self.assertTrue(log[-2]["incomplete"])

    def test_v3_update_and_revisions(self):
        file_id = self.seed("habit-backup.json", "one")["id"]
        status, _, _ = self.client.json(
            "PATCH", f"/upload/drive/v3/files/{file_id}?uploadType=media", body=b"two",
            headers=self.auth)
        self.assertEqual(status, 200)
        _, _, revisions = self.client.json(
            "GET", f"/drive/v3/files/{file_id}/revisions?fields=revisions(id,size)", headers=self.auth)
        self.assertEqual([r["size"] for r in revisions["revisions"]], ["3", "3"])

    def test_delete_answers_204_then_404(self):
        file_id = self.seed("habit-backup.json", "x")["id"]
        status, _, _ = self.client.request("DELETE", f"/drive/v3/files/{file_id}", headers=self.auth)
        self.assertEqual(status, 204)
        status, _, answer = self.client.json("GET", f"/drive/v3/files/{file_id}", headers=self.auth)
        self.assertEqual((status, answer["error"]["errors"][0]["reason"]), (404, "notFound"))

    def test_interleaved_write_between_read_and_write_causes_412(self):
        file_id = self.seed("habit-backup.json", "mine")["id"]
        self.client.request("POST", "/__emulator/interleave", json_body={"content": "theirs"})
        _, _, meta = self.client.json("GET", f"/drive/v2/files/{file_id}", headers=self.auth)
        self.client.request("GET", f"/drive/v3/files/{file_id}?alt=media", headers=self.auth)
        status, _, _ = self.client.json(
            "PUT", f"/upload/drive/v2/files/{file_id}?uploadType=media", body=b"merged",
            headers={"If-Match": meta["etag"], **self.auth})
        self.assertEqual(status, 412)
        _, _, data = self.client.request("GET", f"/drive/v3/files/{file_id}?alt=media", headers=self.auth)
        self.assertEqual(data, b"theirs")
        _, _, meta = self.client.json("GET", f"/drive/v2/files/{file_id}", headers=self.auth)
        status, _, _ = self.client.json(
            "PUT", f"/upload/drive/v2/files/{file_id}?uploadType=media", body=b"merged again",
            headers={"If-Match": meta["etag"], **self.auth})
        self.assertEqual(status, 200, "the interleave happens once")
        log = self.client.json("GET", "/__emulator/log")[2]
        self.assertEqual([e["status"] for e in log if e.get("interleaved")], [412])

    def test_a_listing_that_shows_the_file_arms_the_interleave(self):
        file_id = self.seed("habit-backup.json", "mine")["id"]
        etag = self.client.json("GET", f"/drive/v2/files/{file_id}", headers=self.auth)[2]["etag"]
        self.client.request("POST", "/__emulator/interleave", json_body={"content": "theirs"})
        self.list_named("habit-backup.json")
        status, _, _ = self.client.json(
            "PUT", f"/upload/drive/v2/files/{file_id}?uploadType=media", body=b"merged",
            headers={"If-Match": etag, **self.auth})
        self.assertEqual(status, 412)

    def test_the_log_counts_request_and_answer_bytes(self):
        file_id = self.seed("habit-backup.json", "0123456789")["id"]
        self.client.request("GET", f"/drive/v3/files/{file_id}?alt=media", headers=self.auth)
        self.client.request("PUT", f"/upload/drive/v2/files/{file_id}?uploadType=media",
                            body=b"abc", headers=self.auth)
        log = self.client.json("GET", "/__emulator/log")[2]
        download, upload = log[-2], log[-1]
        self.assertEqual((download["requestBytes"], download["responseBytes"]), (0, 10))
        self.assertEqual(upload["requestBytes"], 3)
        self.assertGreater(upload["responseBytes"], 0)


class GoogleGrammarTests(DriveTestCase):
    """What Google accepts that a strict reading of the docs might refuse, and the `fields`
    and `q` grammars; Google's client itself runs in fidelity_google_client.py."""

    def names(self, q):
        status, _, answer = self.client.json(
            "GET", "/drive/v3/files?" + urllib.parse.urlencode(
                {"spaces": "appDataFolder", "q": q, "fields": "files(name)"}), headers=self.auth)
        self.assertEqual(status, 200, (q, answer))
        return sorted(f["name"] for f in answer["files"])

    def test_query_language_operators(self):
        self.client.json("POST", "/__emulator/files", json_body={
            "name": "HelloWorld.json", "content": "1", "modifiedTime": "2026-01-01T00:00:00Z"})
        self.client.json("POST", "/__emulator/files", json_body={
            "name": "habit-backup.json", "content": "2", "modifiedTime": "2026-06-01T12:00:00Z"})
        self.client.json("POST", "/__emulator/files", json_body={
            "name": "notes.txt", "content": "3", "modifiedTime": "2026-03-01T00:00:00Z",
            "mimeType": "text/plain"})
        cases = {
            "name contains 'Hello'": ["HelloWorld.json"],
            "name contains 'World'": [],  # Google: prefix matching only
            "name contains 'backup'": ["habit-backup.json"],
            "not name contains 'habit'": ["HelloWorld.json", "notes.txt"],
            "name = 'notes.txt' or (name contains 'habit' and trashed = false)":
                ["habit-backup.json", "notes.txt"],
            "modifiedTime > '2026-02-01T00:00:00' and modifiedTime <= '2026-06-01T12:00:00Z'":
                ["habit-backup.json", "notes.txt"],
            "modifiedTime < '2026-01-01T01:00:00+01:00'": [],
            "mimeType != 'text/plain' and not (name = 'HelloWorld.json')": ["habit-backup.json"],
            "mimeType contains 'text/'": ["notes.txt"],
            "'appDataFolder' in parents and name != 'notes.txt'": ["HelloWorld.json", "habit-backup.json"],
        }
        for q, expected in cases.items():
            with self.subTest(q=q):
                self.assertEqual(self.names(q), expected)
        for bad in ("name contains", "(name = 'x'", "modifiedTime > 'yesterday'", "name ~ 'x'",
                    "name = 'x' and"):
            status, _, answer = self.client.json(
                "GET", "/drive/v3/files?spaces=appDataFolder&q=" + urllib.parse.quote(bad),
                headers=self.auth)
            self.assertEqual((status, answer["error"]["errors"][0]["location"]), (400, "q"), bad)

    def test_fields_are_checked_against_the_resource_schemas(self):
        file_id = self.seed("a.json", "{}")["id"]
        accepted = {
            f"/drive/v3/files/{file_id}?fields=" + urllib.parse.quote("id,capabilities/canEdit,*"),
            f"/drive/v3/files/{file_id}?fields=" + urllib.parse.quote("appProperties/anyKey"),
            "/drive/v3/files?spaces=appDataFolder&fields=" + urllib.parse.quote("files/id,files(name)"),
            f"/drive/v2/files/{file_id}?fields=" + urllib.parse.quote("etag,parents(id)"),
            f"/drive/v3/files/{file_id}/revisions?fields=" + urllib.parse.quote("revisions/md5Checksum"),
        }
        for path in accepted:
            with self.subTest(path=path):
                self.assertEqual(self.client.json("GET", path, headers=self.auth)[0], 200)
        refused = {
            f"/drive/v3/files/{file_id}?fields=etag": "etag",
            f"/drive/v3/files/{file_id}?fields=id/name": "id/name",
            "/drive/v3/files?spaces=appDataFolder&fields=files(md5checksum)": "md5checksum",
            f"/drive/v2/files/{file_id}?fields=name": "name",
            f"/drive/v3/files/{file_id}/revisions?fields=revisions(etag)": "etag",
            f"/drive/v3/files/{file_id}?fields=" + urllib.parse.quote("files(id"): "files(id",
        }
        for path, bad in refused.items():
            with self.subTest(path=path):
                status, _, answer = self.client.json("GET", path, headers=self.auth)
                self.assertEqual(status, 400)
                self.assertEqual(answer["error"]["message"], f"Invalid field selection {bad}")
                self.assertEqual(answer["error"]["status"], "INVALID_ARGUMENT")

    def test_multipart_with_lf_line_endings_and_a_quoted_boundary(self):
        body = (b'--==b 1==\n'
                b'Content-Type: application/json\n\n'
                b'{"name": "lf.json", "parents": ["appDataFolder"]}\n'
                b'--==b 1==\n'
                b'Content-Type: application/json\n'
                b'Content-Transfer-Encoding: binary\n\n'
                b'{"a": 1}\n'
                b'--==b 1==--')
        status, _, answer = self.client.json(
            "POST", "/upload/drive/v3/files?uploadType=multipart&fields=name,size", body=body,
            headers={"Content-Type": 'multipart/related; boundary="==b 1=="', **self.auth})
        self.assertEqual((status, answer), (200, {"name": "lf.json", "size": "8"}))

    def test_range_downloads_answer_206_with_content_range(self):
        file_id = self.seed("a.json", "0123456789")["id"]
        path = f"/drive/v3/files/{file_id}?alt=media"
        for range_header, status, body, content_range in (
                ("bytes=2-4", 206, b"234", "bytes 2-4/10"), ("bytes=7-", 206, b"789", "bytes 7-9/10"),
                ("bytes=-2", 206, b"89", "bytes 8-9/10"), ("bytes=5-99", 206, b"56789", "bytes 5-9/10"),
                ("bytes=10-", 416, None, "bytes */10"), ("items=1-2", 200, b"0123456789", None)):
            with self.subTest(range_header=range_header):
                got, headers, data = self.client.request(
                    "GET", path, headers={"Range": range_header, **self.auth})
                self.assertEqual((got, headers.get("content-range")), (status, content_range))
                if body is not None:
                    self.assertEqual(data, body)

    def test_v2_alt_media_serves_the_bytes_and_metadata_only_create(self):
        file_id = self.seed("a.json", "v2 content")["id"]
        _, headers, data = self.client.request("GET", f"/drive/v2/files/{file_id}?alt=media",
                                               headers=self.auth)
        self.assertEqual(data, b"v2 content")
        status, _, created = self.client.json(
            "POST", "/drive/v3/files?fields=id,name,size,md5Checksum",
            json_body={"name": "empty.json", "parents": ["appDataFolder"]}, headers=self.auth)
        self.assertEqual((status, created["size"], created["md5Checksum"]),
                         (200, "0", hashlib.md5(b"").hexdigest()))

    def test_a_rename_moves_version_modified_time_and_the_v2_etag(self):
        file_id = self.seed("a.json", "x")["id"]
        before = self.client.json("GET", f"/drive/v2/files/{file_id}", headers=self.auth)[2]
        self.client.request("POST", "/__emulator/clock", json_body={"offset": 5})
        self.client.json("PATCH", f"/drive/v3/files/{file_id}", json_body={"name": "b.json"},
                         headers=self.auth)
        after = self.client.json("GET", f"/drive/v2/files/{file_id}", headers=self.auth)[2]
        self.assertEqual(int(after["version"]), int(before["version"]) + 1)
        self.assertGreater(after["modifiedDate"], before["modifiedDate"])
        self.assertNotEqual(after["etag"], before["etag"])
        self.assertEqual(after["headRevisionId"], before["headRevisionId"], "no new revision")


class RevisionTests(DriveTestCase):
    """Revisions as Google documents them, and the retention switches (revisionsKept,
    revisionMaxAgeDays) the product must not depend on."""

    def upload(self, file_id, content):
        status, _, answer = self.client.json(
            "PATCH", f"/upload/drive/v3/files/{file_id}?uploadType=media", body=content,
            headers=self.auth)
        self.assertEqual(status, 200, answer)

    def revisions(self, file_id, **query):
        query.setdefault("fields", "nextPageToken,revisions(id,size,md5Checksum,keepForever,modifiedTime)")
        status, _, answer = self.client.json(
            "GET", f"/drive/v3/files/{file_id}/revisions?" + urllib.parse.urlencode(query),
            headers=self.auth)
        self.assertEqual(status, 200, answer)
        return answer

    def settings(self, **changes):
        return self.client.json("POST", "/__emulator/settings", json_body=changes)

    def test_every_content_upload_is_a_revision_with_its_own_bytes(self):
        file_id = self.seed("habit-backup.json", "one")["id"]
        self.upload(file_id, b"two!")
        self.client.request("PUT", f"/upload/drive/v2/files/{file_id}?uploadType=media",
                            body=b"three", headers=self.auth)
        self.client.json("PATCH", f"/drive/v3/files/{file_id}", json_body={"name": "renamed.json"},
                         headers=self.auth)
        revisions = self.revisions(file_id)["revisions"]
        contents = [b"one", b"two!", b"three"]
        self.assertEqual([r["size"] for r in revisions], [str(len(c)) for c in contents],
                         "three uploads, three revisions; a rename makes none")
        self.assertEqual([r["md5Checksum"] for r in revisions],
                         [hashlib.md5(c).hexdigest() for c in contents])
        self.assertEqual({r["keepForever"] for r in revisions}, {False})
        for revision, content in zip(revisions, contents):
            path = f"/drive/v3/files/{file_id}/revisions/{revision['id']}"
            _, _, data = self.client.request("GET", path + "?alt=media", headers=self.auth)
            self.assertEqual(data, content)
            _, _, meta = self.client.json("GET", path, headers=self.auth)
            self.assertEqual(set(meta), {"kind", "id", "mimeType", "modifiedTime"},
                             "a revision's default fields are Google's four")
        _, _, file = self.client.json(
            "GET", f"/drive/v3/files/{file_id}?fields=headRevisionId,md5Checksum", headers=self.auth)
        self.assertEqual(file["headRevisionId"], revisions[-1]["id"])
        self.assertEqual(file["md5Checksum"], revisions[-1]["md5Checksum"])

    def test_revision_list_pages_with_page_token(self):
        file_id = self.seed("habit-backup.json", "1")["id"]
        for content in (b"2", b"3"):
            self.upload(file_id, content)
        first = self.revisions(file_id, pageSize=2)
        self.assertEqual([r["size"] for r in first["revisions"]], ["1", "1"])
        second = self.revisions(file_id, pageSize=2, pageToken=first["nextPageToken"])
        self.assertEqual(len(second["revisions"]), 1)
        self.assertNotIn("nextPageToken", second)
        ids = [r["id"] for r in first["revisions"] + second["revisions"]]
        self.assertEqual(len(set(ids)), 3)

    def test_retention_keeps_the_head_and_pinned_revisions_by_count_and_age(self):
        status, _, answer = self.settings(revisionsKept=2, revisionMaxAgeDays=30)
        self.assertEqual((status, answer["revisionsKept"]), (200, 2))
        file_id = self.seed("habit-backup.json", "r1")["id"]
        pinned = self.revisions(file_id)["revisions"][0]["id"]
        status, _, answer = self.client.json(
            "PATCH", f"/drive/v3/files/{file_id}/revisions/{pinned}?fields=id,keepForever",
            json_body={"keepForever": True}, headers=self.auth)
        self.assertEqual((status, answer), (200, {"id": pinned, "keepForever": True}))
        for content in (b"r2", b"r3", b"r4"):
            self.upload(file_id, content)
        sizes = [hashlib.md5(c).hexdigest() for c in (b"r1", b"r3", b"r4")]
        self.assertEqual([r["md5Checksum"] for r in self.revisions(file_id)["revisions"]], sizes,
                         "two unpinned kept (the newest), the pinned one besides")
        self.client.request("POST", "/__emulator/clock", json_body={"offset": 31 * 86400})
        # The login's token expired on Drive's clock a month ago: a fresh one.
        self.auth = self.bearer(self.login()["access_token"])
        left = self.revisions(file_id)["revisions"]
        self.assertEqual([r["md5Checksum"] for r in left], [sizes[0], sizes[2]],
                         "past the age limit only the pinned and the head stay")

    def test_keep_forever_patch_and_delete(self):
        file_id = self.seed("habit-backup.json", "one")["id"]
        self.upload(file_id, b"two")
        first, head = [r["id"] for r in self.revisions(file_id)["revisions"]]
        path = f"/drive/v3/files/{file_id}/revisions"
        status, _, answer = self.client.json("PATCH", f"{path}/{first}", json_body={"keepForever": "yes"},
                                             headers=self.auth)
        self.assertEqual(status, 400, "keepForever is a boolean")
        status, _, _ = self.client.request("DELETE", f"{path}/{first}", headers=self.auth)
        self.assertEqual(status, 204)
        status, _, answer = self.client.json("GET", f"{path}/{first}", headers=self.auth)
        self.assertEqual((status, answer["error"]["errors"][0]["reason"]), (404, "notFound"))
        status, _, answer = self.client.json("DELETE", f"{path}/{head}", headers=self.auth)
        self.assertEqual(status, 400, "the last remaining revision cannot be deleted")
        _, _, data = self.client.request("GET", f"/drive/v3/files/{file_id}?alt=media", headers=self.auth)
        self.assertEqual(data, b"two")

    def test_a_page_holds_at_most_max_page_size_whatever_page_size_asks(self):
        file_id = self.seed("habit-backup.json", "r0")["id"]
        for number in range(1, 5):
            self.upload(file_id, f"r{number}".encode())
        status, _, _ = self.settings(maxPageSize=2)
        self.assertEqual(status, 200)
        ids, token, pages = [], None, 0
        while True:
            answer = self.revisions(file_id, pageSize="1000", **({"pageToken": token} if token else {}))
            pages += 1
            self.assertLessEqual(len(answer["revisions"]), 2)
            ids += [r["id"] for r in answer["revisions"]]
            token = answer.get("nextPageToken")
            if not token:
                break
        self.assertEqual((len(ids), pages), (5, 3), "every revision, over three pages")
        self.assertEqual(self.stats()["pagesCut"], 2)
        self.assertEqual(self.settings(maxPageSize=0)[0], 400)

    def test_a_private_v2_property_is_a_v3_app_property_and_outlives_uploads(self):
        file_id = self.seed("habit-backup.json", "one")["id"]
        status, headers, tagged = self.client.json("GET", f"/drive/v2/files/{file_id}",
                                                   headers=self.auth)
        self.assertEqual((status, tagged["properties"]), (200, []))
        body = {"properties": [{"key": "checkedRevision", "value": "R1", "visibility": "PRIVATE"},
                               {"key": "shown", "value": "x", "visibility": "PUBLIC"}]}
        status, _, stale = self.client.json(
            "PATCH", f"/drive/v2/files/{file_id}", json_body=body,
            headers={**self.auth, "If-Match": '"stale"'})
        self.assertEqual(status, 412, "a v2 metadata patch honours If-Match")
        status, _, patched = self.client.json(
            "PATCH", f"/drive/v2/files/{file_id}", json_body=body,
            headers={**self.auth, "If-Match": tagged["etag"]})
        self.assertEqual(status, 200)
        self.assertNotEqual(patched["etag"], tagged["etag"], "a metadata change moves the etag")
        self.assertEqual([(p["key"], p["value"]) for p in patched["properties"]],
                         [("checkedRevision", "R1")], "only the private property is kept")
        self.assertEqual(len(self.revisions(file_id)["revisions"]), 1, "it makes no revision")
        self.upload(file_id, b"two")
        _, _, listed = self.client.json(
            "GET", f"/drive/v3/files/{file_id}?fields=id,appProperties", headers=self.auth)
        self.assertEqual(listed["appProperties"], {"checkedRevision": "R1"},
                         "app properties stay across a content upload")
        status, _, _ = self.client.json(
            "PATCH", f"/drive/v3/files/{file_id}", json_body={"appProperties": {"checkedRevision": None}},
            headers=self.auth)
        _, _, cleared = self.client.json(
            "GET", f"/drive/v3/files/{file_id}?fields=id,appProperties", headers=self.auth)
        self.assertEqual((status, "appProperties" in cleared), (200, False), "null removes a key")

    def test_at_most_200_pins_and_pinned_revisions_count_as_storage(self):
        file_id = self.seed("habit-backup.json", "r0")["id"]
        path = f"/drive/v3/files/{file_id}/revisions"
        for number in range(201):
            if number:
                self.upload(file_id, f"r{number}".encode())
            head = self.revisions(file_id, pageSize="1000")["revisions"][-1]["id"]
            status, _, _ = self.client.json("PATCH", f"{path}/{head}",
                                            json_body={"keepForever": True}, headers=self.auth)
            self.assertEqual(status, 200 if number < 200 else 400,
                             f"pin {number + 1}: up to 200 are allowed")
        _, _, metadata = self.client.json(
            "GET", f"/drive/v3/files/{file_id}?fields=size,quotaBytesUsed", headers=self.auth)
        pinned = sum(len(f"r{n}") for n in range(200))
        self.assertEqual(int(metadata["quotaBytesUsed"]), pinned + int(metadata["size"]))

    def pin(self, file_id, revision, keep=True):
        return self.client.json(
            "PATCH", f"/drive/v3/files/{file_id}/revisions/{revision}?fields=id,keepForever",
            json_body={"keepForever": keep}, headers=self.auth)

    def stats(self):
        return self.client.json("GET", "/__emulator/stats")[2]

    def test_the_pin_cap_is_a_setting(self):
        status, _, answer = self.settings(maxPinnedRevisions=2)
        self.assertEqual((status, answer["maxPinnedRevisions"]), (200, 2))
        file_id = self.seed("habit-backup.json", "r0")["id"]
        for content in (b"r1", b"r2"):
            self.upload(file_id, content)
        ids = [r["id"] for r in self.revisions(file_id)["revisions"]]
        self.assertEqual([self.pin(file_id, r)[0] for r in ids], [200, 200, 400],
                         "the third pin is past the cap of 2")
        self.assertEqual(self.pin(file_id, ids[1])[0], 200, "pinning a pinned one again is no pin more")
        status, _, answer = self.pin(file_id, ids[2])
        self.assertEqual((status, answer["error"]["errors"][0]["reason"]), (400, "badRequest"))
        self.client.request("DELETE", f"/drive/v3/files/{file_id}/revisions/{ids[0]}",
                            headers=self.auth)
        self.assertEqual(self.pin(file_id, ids[2])[0], 200, "a deleted pin makes room")
        for bad in (0, -1, 2.5, True, "200"):
            status, _, answer = self.settings(maxPinnedRevisions=bad)
            self.assertEqual(status, 400, bad)
            self.assertIn("maxPinnedRevisions", answer["error"])
        self.client.request("POST", "/__emulator/reset")
        _, _, settings = self.client.json("GET", "/__emulator/settings")
        self.assertEqual(settings["maxPinnedRevisions"], 200)

    def test_a_pin_cannot_be_taken_off_a_revision_that_is_not_the_head(self):
        file_id = self.seed("habit-backup.json", "one")["id"]
        first = self.revisions(file_id)["revisions"][0]["id"]
        status, _, answer = self.pin(file_id, first)
        self.assertEqual((status, answer), (200, {"id": first, "keepForever": True}))
        status, _, answer = self.pin(file_id, first, keep=False)
        self.assertEqual((status, answer), (200, {"id": first, "keepForever": False}),
                         "the head may be unpinned")
        self.pin(file_id, first)
        self.upload(file_id, b"two")
        status, _, answer = self.pin(file_id, first, keep=False)
        self.assertEqual((status, answer["error"]["errors"][0]["reason"]),
                         (400, "illegalKeepForeverModification"))
        self.assertTrue(self.revisions(file_id)["revisions"][0]["keepForever"], "still pinned")
        status, _, _ = self.client.request(
            "DELETE", f"/drive/v3/files/{file_id}/revisions/{first}", headers=self.auth)
        self.assertEqual(status, 204, "deleting it is how a pin is released")
        self.assertEqual(self.stats()["unpinsRefused"], 1)

    def test_a_fractional_age_limit_is_crossed_on_the_emulators_clock(self):
        status, _, answer = self.settings(revisionMaxAgeDays=0.25)
        self.assertEqual((status, answer["revisionMaxAgeDays"]), (200, 0.25))
        file_id = self.seed("habit-backup.json", "one")["id"]
        self.upload(file_id, b"two")
        self.client.request("POST", "/__emulator/clock", json_body={"offset": 5 * 3600})
        self.auth = self.bearer(self.login()["access_token"])
        self.assertEqual(len(self.revisions(file_id)["revisions"]), 2, "five hours: both kept")
        self.client.request("POST", "/__emulator/clock", json_body={"offset": 7 * 3600})
        self.auth = self.bearer(self.login()["access_token"])
        self.assertEqual(len(self.revisions(file_id)["revisions"]), 1, "past six hours: the head")
        self.assertEqual(self.stats()["purgedByAge"], 1)
        for bad in (-0.5, float("nan"), "1"):
            self.assertEqual(self.client.request(
                "POST", "/__emulator/settings",
                body=json.dumps({"revisionMaxAgeDays": bad}).encode())[0], 400, bad)

    def test_stats_count_pins_purges_deletes_and_refreshes_and_reset_zeroes_them(self):
        self.assertEqual(set(self.stats().values()), {0})
        self.settings(maxPinnedRevisions=2, revisionsKept=2, revisionDownloads="pinned-only")
        file_id = self.seed("habit-backup.json", "r0")["id"]
        ids = [self.revisions(file_id)["revisions"][0]["id"]]
        for number in range(1, 5):
            if number <= 2:
                self.pin(file_id, ids[-1])
            self.upload(file_id, f"r{number}".encode())
            ids.append(self.revisions(file_id)["revisions"][-1]["id"])
        # r0 and r1 pinned; of r2, r3 and r4 (unpinned) the oldest was purged when r4 came.
        self.assertEqual([r["id"] for r in self.revisions(file_id)["revisions"]],
                         [ids[0], ids[1], ids[3], ids[4]])
        self.assertEqual(self.pin(file_id, ids[4])[0], 400)
        self.client.request("DELETE", f"/drive/v3/files/{file_id}/revisions/{ids[0]}",
                            headers=self.auth)
        status, _, _ = self.client.request(
            "GET", f"/drive/v3/files/{file_id}/revisions/{ids[3]}?alt=media", headers=self.auth)
        self.assertEqual(status, 403)
        self.client.request("POST", "/__emulator/settings", json_body={"accessTokenLifetime": 60})
        tokens = self.login()
        self.client.request("POST", "/__emulator/clock", json_body={"offset": 120})
        status, _, _ = self.client.request("GET", "/drive/v3/files?spaces=appDataFolder",
                                           headers=self.bearer(tokens["access_token"]))
        self.assertEqual(status, 401, "expired on Drive's clock, though not on the machine's")
        status, _, _ = self.client.json("POST", "/token", form={
            "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
            "client_id": "test-client-id", "client_secret": "test-client-secret"})
        self.assertEqual(status, 200)
        stats = self.stats()
        self.assertEqual(stats, {
            "pinsMade": 2, "pinsRefused": 1, "unpinsRefused": 0, "revisionsDeleted": 1,
            "purgedByCount": 1, "purgedByAge": 0, "downloadsRefused": 1, "maxPinnedSeen": 2,
            "maxRevisionsSeen": 4, "tokenRefreshes": 1, "expiredTokensRefused": 1, "pagesCut": 0},
            stats)
        self.client.request("POST", "/__emulator/reset")
        self.assertEqual(set(self.stats().values()), {0})

    def test_the_log_names_the_login_and_the_revision_an_upload_made(self):
        file_id = self.seed("habit-backup.json", "one")["id"]
        self.upload(file_id, b"two")
        head = self.revisions(file_id)["revisions"][-1]["id"]
        entries = self.client.json("GET", "/__emulator/log")[2]
        upload = [e for e in entries if e["path"].startswith("/upload/")][-1]
        self.assertEqual((upload["grant"], upload["revision"]), (1, head),
                         "the setUp login is the first grant")
        self.assertNotIn("revision", entries[-1], "a listing makes no revision")
        status, _, created = self.create_multipart("other.json", b"{}", self.new_id())
        entry = self.client.json("GET", "/__emulator/log")[2][-1]
        self.assertEqual((status, entry["revision"]), (200, self.revisions(created["id"])
                                                        ["revisions"][0]["id"]), "a create too")
        self.client.request("POST", "/__emulator/faults", json_body={"status": 503, "next": 1})
        self.client.request("GET", "/drive/v3/files?spaces=appDataFolder", headers=self.auth)
        entry = self.client.json("GET", "/__emulator/log")[2][-1]
        self.assertEqual((entry["status"], entry["grant"]), (503, 1), "a fault's answer too")

    def test_deleting_the_head_makes_the_previous_revision_the_content(self):
        file_id = self.seed("habit-backup.json", "one")["id"]
        self.upload(file_id, b"two")
        first, head = [r["id"] for r in self.revisions(file_id)["revisions"]]
        before = self.client.json("GET", f"/drive/v2/files/{file_id}", headers=self.auth)[2]
        self.client.request("DELETE", f"/drive/v3/files/{file_id}/revisions/{head}", headers=self.auth)
        after = self.client.json("GET", f"/drive/v2/files/{file_id}", headers=self.auth)[2]
        self.assertEqual((after["headRevisionId"], after["md5Checksum"]),
                         (first, hashlib.md5(b"one").hexdigest()))
        self.assertNotEqual(after["etag"], before["etag"])

    def test_settings_are_checked_and_reset_restores_them(self):
        for bad in ({"ifMatch": "sometimes"}, {"revisionsKept": 0}, {"revisionMaxAgeDays": "30"},
                    {"revisionsKept": True}, {"retention": 5}):
            status, _, answer = self.settings(**bad)
            self.assertEqual(status, 400, bad)
            self.assertIn(next(iter(bad)), answer["error"])
        self.settings(ifMatch="ignore", revisionsKept=7)
        self.client.request("POST", "/__emulator/reset")
        _, _, settings = self.client.json("GET", "/__emulator/settings")
        self.assertEqual((settings["ifMatch"], settings["revisionsKept"],
                          settings["revisionMaxAgeDays"]), ("honour", 100, 30))


class IfMatchModeTests(DriveTestCase):
    """The `ifMatch` switch: where a v2 `If-Match` is checked (Google does not document it)."""

    def etag(self, file_id):
        return self.client.json("GET", f"/drive/v2/files/{file_id}", headers=self.auth)[2]["etag"]

    def open_session(self, file_id, etag):
        status, headers, _ = self.client.request(
            "PUT", f"/upload/drive/v2/files/{file_id}?uploadType=resumable",
            headers={"If-Match": etag, "X-Upload-Content-Length": "4", **self.auth})
        if status != 200:
            return status, None
        return status, urllib.parse.urlsplit(headers["location"])._replace(scheme="", netloc="").geturl()

    def outcomes(self, mode):
        """(simple stale write, session opened with a stale etag, session whose file changed
        before it completed) -> statuses."""
        self.client.request("POST", "/__emulator/settings", json_body={"ifMatch": mode})
        file_id = self.seed("habit-backup.json", "one")["id"]
        stale = self.etag(file_id)
        self.client.request("PUT", f"/upload/drive/v2/files/{file_id}?uploadType=media",
                            body=b"two", headers=self.auth)
        simple = self.client.request("PUT", f"/upload/drive/v2/files/{file_id}?uploadType=media",
                                     body=b"mine", headers={"If-Match": stale, **self.auth})[0]
        opened_stale = self.open_session(file_id, stale)[0]
        status, session = self.open_session(file_id, self.etag(file_id))
        self.assertEqual(status, 200)
        self.client.request("PUT", f"/upload/drive/v2/files/{file_id}?uploadType=media",
                            body=b"them", headers=self.auth)
        finished = self.client.request("PUT", session, body=b"mine",
                                       headers={"Content-Range": "bytes 0-3/4"})[0]
        return simple, opened_stale, finished

    def test_honour_checks_every_write(self):
        self.assertEqual(self.outcomes("honour"), (412, 412, 412))

    def test_open_only_never_checks_when_a_session_completes(self):
        self.assertEqual(self.outcomes("open-only"), (412, 412, 200))

    def test_ignore_never_checks(self):
        self.assertEqual(self.outcomes("ignore"), (200, 200, 200))


class ConcurrencyTests(DriveTestCase):
    def test_compare_and_swap_loses_no_write_under_concurrent_writers(self):
        """Three "devices" append their own line through read-etag / conditional-write loops;
        every line must survive, which holds only if the If-Match check and the write are
        one atomic step."""
        file_id = self.seed("habit-backup.json", "")["id"]
        writes_each, conflicts = 15, []

        def device(name):
            for n in range(writes_each):
                while True:
                    _, _, meta = self.client.json("GET", f"/drive/v2/files/{file_id}", headers=self.auth)
                    _, _, data = self.client.request(
                        "GET", f"/drive/v3/files/{file_id}?alt=media", headers=self.auth)
                    status, _, _ = self.client.request(
                        "PUT", f"/upload/drive/v2/files/{file_id}?uploadType=media",
                        body=data + f"{name}-{n}\n".encode(),
                        headers={"If-Match": meta["etag"], **self.auth})
                    if status == 200:
                        break
                    conflicts.append(status)

        threads = [threading.Thread(target=device, args=(name,)) for name in "abc"]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        _, _, data = self.client.request("GET", f"/drive/v3/files/{file_id}?alt=media", headers=self.auth)
        lines = data.decode().split()
        self.assertEqual(sorted(lines), sorted(f"{name}-{n}" for name in "abc" for n in range(writes_each)))
        self.assertTrue(all(status == 412 for status in conflicts))


class ResumableTests(DriveTestCase):
    def start(self, total=None, name="big.json"):
        headers = {"X-Upload-Content-Type": "application/json", **self.auth}
        if total is not None:
            headers["X-Upload-Content-Length"] = str(total)
        status, response_headers, _ = self.client.request(
            "POST", "/upload/drive/v3/files?uploadType=resumable",
            json_body={"name": name, "parents": ["appDataFolder"]}, headers=headers)
        self.assertEqual(status, 200)
        return urllib.parse.urlsplit(response_headers["location"])._replace(scheme="", netloc="").geturl()

    def put(self, session, data, content_range):
        return self.client.request("PUT", session, body=data,
                                   headers={"Content-Range": content_range})

    def test_chunks_308_with_range_then_200_and_status_query(self):
        content = os.urandom(2 * CHUNK + 100)
        total = len(content)
        session = self.start(total)
        status, headers, _ = self.put(session, b"", f"bytes */{total}")
        self.assertEqual(status, 308)
        self.assertNotIn("range", headers, "nothing arrived yet: no Range header")
        status, headers, _ = self.put(session, content[:CHUNK], f"bytes 0-{CHUNK - 1}/{total}")
        self.assertEqual((status, headers["range"]), (308, f"bytes=0-{CHUNK - 1}"))
        status, headers, _ = self.put(session, b"", f"bytes */{total}")
        self.assertEqual((status, headers["range"]), (308, f"bytes=0-{CHUNK - 1}"))
        status, _, _ = self.put(session, content[CHUNK:CHUNK + 1000], f"bytes {CHUNK}-{CHUNK + 999}/{total}")
        self.assertEqual(status, 400, "a middle chunk must be a multiple of 256 KiB")
        status, _, _ = self.put(session, content[CHUNK:], f"bytes {CHUNK}-{total - 1}/{total}")
        self.assertEqual(status, 200)
        files = self.client.json("GET", "/__emulator/files")[2]
        self.assertEqual(base64.b64decode(files[0]["contentBase64"]), content)

    def test_unknown_or_expired_session_is_404(self):
        session = self.start()
        self.client.request("POST", "/__emulator/expire-upload-sessions")
        status, _, _ = self.put(session, b"x", "bytes 0-0/1")
        self.assertEqual(status, 404)

    def test_resumable_update_through_v2_checks_if_match(self):
        file_id = self.seed("habit-backup.json", "one")["id"]
        _, _, meta = self.client.json("GET", f"/drive/v2/files/{file_id}", headers=self.auth)
        status, headers, _ = self.client.request(
            "PUT", f"/upload/drive/v2/files/{file_id}?uploadType=resumable",
            headers={"If-Match": meta["etag"], **self.auth})
        self.assertEqual(status, 200)
        session = urllib.parse.urlsplit(headers["location"])._replace(scheme="", netloc="").geturl()
        self.client.request("PUT", f"/upload/drive/v2/files/{file_id}?uploadType=media", body=b"other",
                            headers=self.auth)
        status, _, _ = self.put(session, b"mine", "bytes 0-3/4")
        self.assertEqual(status, 412)


class FaultTests(DriveTestCase):
    def test_status_faults_with_retry_after_then_success(self):
        self.client.request("POST", "/__emulator/faults", json_body={
            "next": 2, "status": 429, "retryAfter": 2, "paths": "/drive/"})
        for _ in range(2):
            status, headers, answer = self.client.json(
                "GET", "/drive/v3/files?spaces=appDataFolder", headers=self.auth)
            self.assertEqual((status, headers["retry-after"]), (429, "2"))
            self.assertEqual(answer["error"]["errors"][0],
                             {"domain": "usageLimits", "reason": "rateLimitExceeded",
                              "message": "Rate Limit Exceeded"})
        status, _, _ = self.client.request("GET", "/drive/v3/files?spaces=appDataFolder", headers=self.auth)
        self.assertEqual(status, 200)

    def test_rate_limit_403_and_5xx_shapes(self):
        for status_code, reason in ((403, "userRateLimitExceeded"), (500, "backendError"),
                                    (503, "backendError")):
            with self.subTest(status=status_code):
                self.client.request("POST", "/__emulator/faults", json_body={"status": status_code})
                status, _, answer = self.client.json(
                    "GET", "/drive/v3/files?spaces=appDataFolder", headers=self.auth)
                self.assertEqual((status, answer["error"]["errors"][0]["reason"]), (status_code, reason))

    def test_cut_applies_the_request_then_drops_the_answer(self):
        file_id = self.new_id()
        self.client.request("POST", "/__emulator/faults", json_body={"cut": 1, "paths": "/upload/"})
        with self.assertRaises((http.client.HTTPException, ConnectionError)):
            self.create_multipart("habit-backup.json", b"{}", file_id)
        status, _, _ = self.create_multipart("habit-backup.json", b"{}", file_id)
        self.assertEqual(status, 409, "the cut create happened: the retry finds the id in use")
        self.assertEqual(len(self.client.json("GET", "/__emulator/files")[2]), 1)

    def test_cut_before_handling_leaves_no_trace(self):
        self.client.request("POST", "/__emulator/faults", json_body={
            "cut": 1, "when": "before", "paths": "/upload/"})
        with self.assertRaises((http.client.HTTPException, ConnectionError)):
            self.create_multipart("habit-backup.json", b"{}")
        self.assertEqual(self.client.json("GET", "/__emulator/files")[2], [])

    def test_faults_follow_path_and_method_filters(self):
        self.client.request("POST", "/__emulator/faults", json_body={
            "status": 500, "paths": ["/upload/"], "methods": ["PUT"]})
        status, _, _ = self.client.request("GET", "/drive/v3/files?spaces=appDataFolder", headers=self.auth)
        self.assertEqual(status, 200)
        file_id = self.seed("habit-backup.json", "x")["id"]
        status, _, _ = self.client.request(
            "PUT", f"/upload/drive/v2/files/{file_id}?uploadType=media", body=b"y", headers=self.auth)
        self.assertEqual(status, 500)

    def test_delay_postpones_the_answer(self):
        self.client.request("POST", "/__emulator/faults", json_body={"delay": 0.5})
        started = datetime.now(timezone.utc)
        status, _, _ = self.client.request("GET", "/drive/v3/files?spaces=appDataFolder", headers=self.auth)
        elapsed = (datetime.now(timezone.utc) - started).total_seconds()
        self.assertEqual(status, 200)
        self.assertGreaterEqual(elapsed, 0.5)

    def test_truncate_shortens_the_download_only(self):
        content = b"0123456789" * 10
        file_id = self.seed("habit-backup.json", content.decode())["id"]
        self.client.request("POST", "/__emulator/faults", json_body={"truncate": 1})
        self.client.request("GET", f"/drive/v2/files/{file_id}", headers=self.auth)
        status, headers, data = self.client.request("GET", f"/drive/v3/files/{file_id}?alt=media",
                                                    headers=self.auth)
        self.assertEqual(status, 200)
        self.assertLess(len(data), len(content))
        _, _, meta = self.client.json("GET", f"/drive/v3/files/{file_id}?fields=md5Checksum",
                                      headers=self.auth)
        self.assertEqual(meta["md5Checksum"], hashlib.md5(content).hexdigest())
        _, _, data = self.client.request("GET", f"/drive/v3/files/{file_id}?alt=media", headers=self.auth)
        self.assertEqual(data, content)


class FakeBrowserTests(EmulatorTestCase):
    """The stand-in browser against a tiny listener that behaves like cloudbackup's."""

    def listener(self):
        seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                if not self.path.startswith("/cb"):
                    self.send_response(404)
                    self.end_headers()
                    return
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                seen.append(query)
                ok = query.get("state") == ["s-123"]
                self.send_response(200 if ok else 400)
                self.end_headers()
                self.wfile.write(b"You can close this tab." if ok else b"state mismatch")

        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        return server.server_address[1], seen

    def run_browser(self, mode):
        port, seen = self.listener()
        _, challenge = pkce_pair()
        url = self.base + "/o/oauth2/v2/auth?" + urllib.parse.urlencode({
            "client_id": "test-client-id", "redirect_uri": f"http://127.0.0.1:{port}/cb",
            "response_type": "code", "scope": SCOPE, "state": "s-123",
            "code_challenge": challenge, "code_challenge_method": "S256"})
        result = subprocess.run([sys.executable, BROWSER, url], capture_output=True, timeout=30,
                                env={**os.environ, "FAKE_BROWSER_MODE": mode,
                                     "FAKE_BROWSER_FOREGROUND": "1"})
        return result, seen

    def test_follow_delivers_the_code_and_state(self):
        result, seen = self.run_browser("follow")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(len(seen), 1)
        self.assertTrue(seen[0]["code"][0].startswith("4/emu-"))

    def test_tamper_state_sends_a_wrong_state_first(self):
        result, seen = self.run_browser("tamper-state")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([q["state"][0] == "s-123" for q in seen], [False, True])

    def test_probe_asks_for_another_path_first(self):
        result, seen = self.run_browser("probe")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(len(seen), 1)

    def test_deny_makes_the_emulator_redirect_with_access_denied(self):
        result, seen = self.run_browser("deny")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([q.get("error") for q in seen], [["access_denied"]])

    def test_failures_are_reported_without_the_code(self):
        port, _ = self.listener()
        _, challenge = pkce_pair()
        url = self.base + "/o/oauth2/v2/auth?" + urllib.parse.urlencode({
            "client_id": "test-client-id", "redirect_uri": f"http://127.0.0.1:{port}/elsewhere",
            "response_type": "code", "scope": SCOPE, "state": "s-123",
            "code_challenge": challenge, "code_challenge_method": "S256", "access_type": "offline"})
        result = subprocess.run([sys.executable, BROWSER, url], capture_output=True, timeout=30,
                                env={**os.environ, "FAKE_BROWSER_FOREGROUND": "1"})
        self.assertEqual(result.returncode, 1)
        self.assertIn(b"answered 404", result.stderr)
        _, _, issued = self.client.json("GET", "/__emulator/secrets")
        self.assertTrue(any(secret.startswith("4/emu-") for secret in issued))
        for secret in issued:
            self.assertNotIn(secret.encode(), result.stderr)
            self.assertNotIn(urllib.parse.quote(secret, safe="").encode(), result.stderr)

    def test_browser_log_records_steps_without_code_or_state(self):
        path = os.path.join(tempfile.mkdtemp(), "browser.log")
        port, _ = self.listener()
        _, challenge = pkce_pair()
        url = self.base + "/o/oauth2/v2/auth?" + urllib.parse.urlencode({
            "client_id": "test-client-id", "redirect_uri": f"http://127.0.0.1:{port}/cb",
            "response_type": "code", "scope": SCOPE, "state": "s-123",
            "code_challenge": challenge, "code_challenge_method": "S256"})
        result = subprocess.run([sys.executable, BROWSER, url], capture_output=True, timeout=30,
                                env={**os.environ, "FAKE_BROWSER_MODE": "tamper-state",
                                     "FAKE_BROWSER_FOREGROUND": "1", "FAKE_BROWSER_LOG": path})
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(path) as handle:
            text = handle.read()
        steps = [json.loads(line)["step"] for line in text.splitlines()]
        self.assertEqual(steps, ["authorize", "tampered", "callback"])
        _, _, issued = self.client.json("GET", "/__emulator/secrets")
        self.assertFalse([secret for secret in issued if secret in text])

    def test_the_launcher_returns_at_once(self):
        _, seen = self.listener()
        result = subprocess.run([sys.executable, BROWSER, f"{self.base}/nowhere"],
                                capture_output=True, timeout=30,
                                env={**os.environ, "FAKE_BROWSER_MODE": "ignore"})
        self.assertEqual(result.returncode, 0)
        self.assertEqual(seen, [])


class LifecycleTests(unittest.TestCase):
    def test_exits_when_stdin_closes(self):
        process, _ = start_emulator()
        process.stdin.close()
        self.assertEqual(process.wait(timeout=10), 0)
        process.stdout.close()

    def test_state_file_keeps_files_across_runs(self):
        folder = tempfile.mkdtemp()
        path = os.path.join(folder, "state.json")
        process, base = start_emulator("--state-file", path)
        Client(base).request("POST", "/__emulator/files", json_body={"name": "a.json", "content": "x"})
        process.terminate()
        self.assertEqual(process.wait(timeout=10), 0)
        process.stdout.close()
        process.stdin.close()
        process, base = start_emulator("--state-file", path)
        status, _, data = Client(base).request("GET", "/__emulator/files")
        process.stdin.close()
        process.wait(timeout=10)
        process.stdout.close()
        self.assertEqual([f["name"] for f in json.loads(data)], ["a.json"])
        self.assertEqual(os.stat(path).st_mode & 0o077, 0, "the state file holds tokens: 0600")

    def test_switches_on_the_command_line_hold_across_resets(self):
        process, base = start_emulator("--if-match", "open-only", "--revisions-kept", "3",
                                       "--revision-max-age-days", "0.5",
                                       "--max-pinned-revisions", "7")
        client = Client(base)
        client.request("POST", "/__emulator/settings", json_body={"ifMatch": "ignore"})
        client.request("POST", "/__emulator/reset")
        _, _, settings = client.json("GET", "/__emulator/settings")
        process.stdin.close()
        process.wait(timeout=10)
        process.stdout.close()
        self.assertEqual((settings["ifMatch"], settings["revisionsKept"],
                          settings["revisionMaxAgeDays"], settings["maxPinnedRevisions"]),
                         ("open-only", 3, 0.5, 7))

    def test_a_bad_switch_is_refused_with_its_name(self):
        result = subprocess.run([sys.executable, EMULATOR, "--revisions-kept", "0"],
                                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10)
        self.assertEqual(result.returncode, 2)
        self.assertIn("revisionsKept must be a whole number, 1 or more", result.stderr)
        self.assertEqual(result.stdout, "", "no LISTENING line when it does not start")
        result = subprocess.run([sys.executable, EMULATOR, "--max-pinned-revisions", "0"],
                                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10)
        self.assertEqual(result.returncode, 2)
        self.assertIn("maxPinnedRevisions must be a whole number, 1 or more", result.stderr)


if __name__ == "__main__":
    unittest.main()
