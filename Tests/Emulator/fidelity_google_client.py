"""The emulator driven by Google's own client: `google-api-python-client` and `google-auth`
(pinned in Tests/requirements.txt), with the Drive v2 and v3 services built from the
discovery documents shipped inside that package. The only change to a document is its
`rootUrl`, which points at the emulator. Every test here is something a program written
against real Drive does, so a difference from Google shows up as a failure here.

Run: .venv/bin/python -m unittest discover -s Tests/Emulator -p 'fidelity_*.py'
(EmulatorSelfTests.swift does this, and `make test` runs it).
"""

import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import google.oauth2.credentials
    from googleapiclient.discovery import build_from_document
    from googleapiclient.errors import HttpError
    from googleapiclient.http import MediaInMemoryUpload, MediaIoBaseDownload
except ImportError as error:  # one clear line instead of a traceback
    sys.exit(f"fidelity_google_client.py: {error}; run `make venv` and use .venv/bin/python")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import drive_discovery  # noqa: E402
from test_emulator import CHUNK, Client, EmulatorTestCase, start_emulator  # noqa: E402

APPDATA = "https://www.googleapis.com/auth/drive.appdata"
# The whole Drive too: a media-only create cannot name the app folder as its parent.
SCOPES = [APPDATA, "https://www.googleapis.com/auth/drive"]


def service(version, base, credentials):
    doc = drive_discovery.document(version)
    doc["rootUrl"] = doc["mtlsRootUrl"] = base + "/"
    return build_from_document(doc, credentials=credentials)


class GoogleClientTestCase(EmulatorTestCase):
    def setUp(self):
        super().setUp()
        grant = self.client.json("POST", "/__emulator/tokens", json_body={"scope": " ".join(SCOPES)})[2]
        credentials = google.oauth2.credentials.Credentials(
            grant["access_token"], refresh_token=grant["refresh_token"],
            token_uri=self.base + "/token", client_id="test-client-id",
            client_secret="test-client-secret", scopes=SCOPES)
        self.v3 = service("v3", self.base, credentials)
        self.v2 = service("v2", self.base, credentials)

    def tearDown(self):
        self.v3.close()
        self.v2.close()

    def create(self, name, content, **extra):
        """A multipart create, the client's own body (what it sends for a small media)."""
        body = {"name": name, "parents": ["appDataFolder"], **extra}
        media = MediaInMemoryUpload(content, mimetype="application/json", resumable=False)
        return self.v3.files().create(body=body, media_body=media,
                                      fields="id,name,size,md5Checksum,version").execute()

    def log(self):
        return self.client.json("GET", "/__emulator/log")[2]

    def reason(self, error):
        return error.error_details[0]["reason"]

    def content_of(self, file_id):
        return self.v3.files().get_media(fileId=file_id).execute()


class ListTests(GoogleClientTestCase):
    def test_list_with_default_and_explicit_fields(self):
        self.create("a.json", b"{}")
        default = self.v3.files().list(spaces="appDataFolder").execute()
        self.assertEqual(set(default), {"kind", "incompleteSearch", "files"})
        self.assertEqual(set(default["files"][0]), {"kind", "id", "name", "mimeType"})
        explicit = self.v3.files().list(spaces="appDataFolder",
                                        fields="files(id,md5Checksum,size)").execute()
        self.assertEqual(explicit["files"][0]["md5Checksum"], hashlib.md5(b"{}").hexdigest())
        self.assertEqual(set(explicit["files"][0]), {"id", "md5Checksum", "size"})

    def test_paging_with_page_token(self):
        for number in range(5):
            self.create(f"f{number}.json", b"x")
        names, request = [], self.v3.files().list(spaces="appDataFolder", pageSize=2,
                                                  fields="nextPageToken,files(name)")
        pages = 0
        while request is not None:
            answer = request.execute()
            names += [f["name"] for f in answer["files"]]
            pages += 1
            request = self.v3.files().list_next(request, answer)
        self.assertEqual((pages, sorted(names)), (3, [f"f{n}.json" for n in range(5)]))

    def test_q_by_name_and_trashed(self):
        self.create("habit-backup.json", b"1")
        self.create("other.json", b"2")
        answer = self.v3.files().list(
            spaces="appDataFolder", q="name = 'habit-backup.json' and trashed = false",
            fields="files(name)").execute()
        self.assertEqual(answer["files"], [{"name": "habit-backup.json"}])
        answer = self.v3.files().list(spaces="appDataFolder", q="trashed = true").execute()
        self.assertEqual(answer["files"], [])

    def test_generate_ids_for_the_app_folder(self):
        answer = self.v3.files().generateIds(space="appDataFolder", count=3).execute()
        self.assertEqual((answer["space"], len(answer["ids"])), ("appDataFolder", 3))
        created = self.create("a.json", b"x", id=answer["ids"][0])
        self.assertEqual(created["id"], answer["ids"][0])


class UploadTests(GoogleClientTestCase):
    def test_multipart_create_and_update(self):
        created = self.create("a.json", b'{"v":1}')
        self.assertEqual((created["name"], created["size"]), ("a.json", "7"))
        media = MediaInMemoryUpload(b'{"v":2}', mimetype="application/json", resumable=False)
        updated = self.v3.files().update(fileId=created["id"], body={"name": "b.json"},
                                         media_body=media, fields="name,md5Checksum").execute()
        self.assertEqual(updated, {"name": "b.json", "md5Checksum": hashlib.md5(b'{"v":2}').hexdigest()})
        self.assertEqual(self.content_of(created["id"]), b'{"v":2}')
        self.assertIn("multipart", [e["query"].get("uploadType") for e in self.log()])

    def test_media_create_and_update(self):
        media = MediaInMemoryUpload(b"raw bytes", mimetype="application/octet-stream")
        created = self.v3.files().create(media_body=media, fields="id,size").execute()
        self.assertEqual(created["size"], "9")
        media = MediaInMemoryUpload(b"new bytes!", mimetype="application/octet-stream")
        self.v3.files().update(fileId=created["id"], media_body=media).execute()
        self.assertEqual(self.content_of(created["id"]), b"new bytes!")
        self.assertEqual([e["query"].get("uploadType") for e in self.log()
                          if e["method"] in ("POST", "PATCH")], ["media", "media"])

    def test_metadata_only_create(self):
        created = self.v3.files().create(body={"name": "empty.json", "parents": ["appDataFolder"]},
                                         fields="id,name,size").execute()
        self.assertEqual((created["name"], created["size"]), ("empty.json", "0"))
        self.assertEqual(self.log()[-1]["path"], "/drive/v3/files")

    def resumable(self, request):
        response = None
        while response is None:
            _, response = request.next_chunk()
        return response

    def test_resumable_create_and_update_in_small_chunks(self):
        content = os.urandom(2 * CHUNK + 1000)
        media = MediaInMemoryUpload(content, mimetype="application/octet-stream",
                                    chunksize=CHUNK, resumable=True)
        created = self.resumable(self.v3.files().create(
            body={"name": "big.bin", "parents": ["appDataFolder"]}, media_body=media,
            fields="id,md5Checksum"))
        self.assertEqual(created["md5Checksum"], hashlib.md5(content).hexdigest())
        statuses = [e["status"] for e in self.log() if "upload_id" in e["query"]]
        self.assertEqual(statuses, [308, 308, 200], "three chunks of at most 256 KiB")
        replacement = os.urandom(CHUNK + 1)
        media = MediaInMemoryUpload(replacement, mimetype="application/octet-stream",
                                    chunksize=CHUNK, resumable=True)
        self.resumable(self.v3.files().update(fileId=created["id"], media_body=media))
        self.assertEqual(self.content_of(created["id"]), replacement)

    def test_a_dropped_connection_resumes_with_the_clients_status_query(self):
        content = os.urandom(3 * CHUNK)
        media = MediaInMemoryUpload(content, mimetype="application/octet-stream",
                                    chunksize=CHUNK, resumable=True)
        request = self.v3.files().create(body={"name": "big.bin", "parents": ["appDataFolder"]},
                                         media_body=media, fields="id,md5Checksum")
        request.next_chunk()  # opens the session and sends the first chunk
        request.next_chunk()
        # The last chunk completes the file, then its answer is cut halfway through the body.
        # (A cut inside the status line would make httplib2 resend the chunk by itself.)
        self.client.request("POST", "/__emulator/faults", json_body={
            "cut": 1, "paths": "/upload/drive/v3/files", "methods": ["PUT"]})
        with self.assertRaises(Exception):
            request.next_chunk()
        _, created = request.next_chunk()
        self.assertEqual(created["md5Checksum"], hashlib.md5(content).hexdigest())
        chunks = [e for e in self.log() if "upload_id" in e["query"]]
        self.assertEqual([(e["requestBytes"], e["status"], e.get("fault")) for e in chunks],
                         [(CHUNK, 308, None), (CHUNK, 308, None), (CHUNK, 200, "cut"),
                          (0, 200, None)],
                         "after the cut the client asks `bytes */N` and gets the finished file")


class DownloadTests(GoogleClientTestCase):
    def test_get_media_whole_and_in_ranges(self):
        content = os.urandom(5000)
        file_id = self.create("a.bin", content)["id"]
        self.assertEqual(self.content_of(file_id), content)
        buffer = io.BytesIO()
        # MediaIoBaseDownload asks for Range chunks and needs 206 + Content-Range to go on.
        downloader = MediaIoBaseDownload(buffer, self.v3.files().get_media(fileId=file_id),
                                         chunksize=2048)
        done, rounds = False, 0
        while not done:
            status, done = downloader.next_chunk()
            rounds += 1
        self.assertEqual((buffer.getvalue(), rounds), (content, 3))
        self.assertEqual([e["status"] for e in self.log()][-3:], [206, 206, 206])

    def test_v2_get_its_etag_and_alt_media(self):
        file_id = self.create("a.json", b"v2 bytes")["id"]
        request = self.v2.files().get(fileId=file_id)
        response, body = request.http.request(request.uri, headers=request.headers)
        meta = json.loads(body)
        self.assertEqual((response.status, response["etag"]), (200, meta["etag"]))
        self.assertEqual((meta["title"], meta["fileSize"]), ("a.json", "8"))
        self.assertEqual(self.v2.files().get_media(fileId=file_id).execute(), b"v2 bytes")


class WriteTests(GoogleClientTestCase):
    def test_v2_update_with_if_match(self):
        file_id = self.create("a.json", b"one")["id"]
        etag = self.v2.files().get(fileId=file_id).execute()["etag"]
        request = self.v2.files().update(
            fileId=file_id, media_body=MediaInMemoryUpload(b"two", mimetype="application/json"))
        request.headers["If-Match"] = etag
        self.assertNotEqual(request.execute()["etag"], etag)
        stale = self.v2.files().update(
            fileId=file_id, media_body=MediaInMemoryUpload(b"three", mimetype="application/json"))
        stale.headers["If-Match"] = etag
        with self.assertRaises(HttpError) as caught:
            stale.execute()
        self.assertEqual((caught.exception.status_code, self.reason(caught.exception)),
                         (412, "conditionNotMet"))
        self.assertEqual(self.content_of(file_id), b"two")

    def test_v2_insert_patch_generate_ids_and_delete(self):
        file_id = self.v2.files().generateIds(space="appDataFolder", maxResults=1).execute()["ids"][0]
        inserted = self.v2.files().insert(
            body={"id": file_id, "title": "v2.json", "parents": [{"id": "appDataFolder"}]},
            media_body=MediaInMemoryUpload(b"{}", mimetype="application/json")).execute()
        self.assertEqual((inserted["id"], inserted["title"]), (file_id, "v2.json"))
        patched = self.v2.files().patch(fileId=file_id, body={"title": "renamed.json"}).execute()
        self.assertEqual(patched["title"], "renamed.json")
        self.assertNotEqual(patched["version"], inserted["version"])
        self.v2.files().delete(fileId=file_id).execute()
        with self.assertRaises(HttpError) as caught:
            self.v2.files().get(fileId=file_id).execute()
        self.assertEqual(caught.exception.status_code, 404)

    def test_a_rename_moves_version_and_modified_time(self):
        created = self.create("a.json", b"x")
        before = self.v3.files().get(fileId=created["id"], fields="version,modifiedTime").execute()
        self.client.request("POST", "/__emulator/clock", json_body={"offset": 5})
        self.v3.files().update(fileId=created["id"], body={"name": "b.json"}).execute()
        after = self.v3.files().get(fileId=created["id"], fields="version,modifiedTime").execute()
        self.assertGreater(int(after["version"]), int(before["version"]))
        self.assertGreater(after["modifiedTime"], before["modifiedTime"])

    def test_delete_answers_204_then_404(self):
        file_id = self.create("a.json", b"x")["id"]
        self.assertEqual(self.v3.files().delete(fileId=file_id).execute(), "")
        self.assertEqual(self.log()[-1]["status"], 204)
        with self.assertRaises(HttpError) as caught:
            self.v3.files().delete(fileId=file_id).execute()
        self.assertEqual((caught.exception.status_code, self.reason(caught.exception)),
                         (404, "notFound"))

    def test_a_reused_id_is_409_file_id_in_use(self):
        file_id = self.v3.files().generateIds(space="appDataFolder", count=1).execute()["ids"][0]
        self.create("a.json", b"x", id=file_id)
        with self.assertRaises(HttpError) as caught:
            self.create("a.json", b"x", id=file_id)
        self.assertEqual((caught.exception.status_code, self.reason(caught.exception)),
                         (409, "fileIdInUse"))


class RevisionTests(GoogleClientTestCase):
    def test_revisions_list_get_media_keep_forever_and_delete(self):
        file_id = self.create("a.json", b"first")["id"]
        self.v3.files().update(fileId=file_id, media_body=MediaInMemoryUpload(
            b"second", mimetype="application/json")).execute()
        revisions = self.v3.revisions().list(
            fileId=file_id, fields="revisions(id,md5Checksum,size,keepForever)").execute()["revisions"]
        self.assertEqual([r["size"] for r in revisions], ["5", "6"])
        first, head = revisions[0]["id"], revisions[1]["id"]
        self.assertEqual(self.v3.revisions().get_media(fileId=file_id, revisionId=first).execute(),
                         b"first")
        pinned = self.v3.revisions().update(fileId=file_id, revisionId=first,
                                            body={"keepForever": True},
                                            fields="id,keepForever").execute()
        self.assertEqual(pinned, {"id": first, "keepForever": True})
        self.v3.revisions().delete(fileId=file_id, revisionId=first).execute()
        left = self.v3.revisions().list(fileId=file_id).execute()["revisions"]
        self.assertEqual([r["id"] for r in left], [head])
        meta = self.v3.files().get(fileId=file_id, fields="headRevisionId").execute()
        self.assertEqual(meta["headRevisionId"], head)


class ErrorTests(GoogleClientTestCase):
    def test_a_misspelt_field_is_refused_like_google(self):
        self.create("a.json", b"x")
        for fields, bad in (("files(id,md5checksum)", "md5checksum"), ("files/etag", "etag"),
                            ("nextPageToken,files(capabilities/canEditt)", "canEditt")):
            with self.subTest(fields=fields):
                with self.assertRaises(HttpError) as caught:
                    self.v3.files().list(spaces="appDataFolder", fields=fields).execute()
                error = caught.exception
                self.assertEqual(error.status_code, 400)
                self.assertEqual(error.reason, f"Invalid field selection {bad}")
                self.assertEqual(self.reason(error), "invalidParameter")
                body = json.loads(error.content)["error"]
                self.assertEqual((body["errors"][0]["location"], body["status"]),
                                 ("fields", "INVALID_ARGUMENT"))

    def test_nested_and_star_selections_are_accepted(self):
        file_id = self.create("a.json", b"x")["id"]
        answer = self.v3.files().get(fileId=file_id,
                                     fields="id,capabilities/canEdit,owners(displayName),*").execute()
        self.assertEqual(answer["id"], file_id)
        v2 = self.v2.files().get(fileId=file_id, fields="etag,labels/trashed").execute()
        self.assertEqual(set(v2), {"etag", "labels"})

    def test_errors_carry_googles_reason_through_http_error(self):
        with self.assertRaises(HttpError) as caught:
            self.v3.files().get(fileId="no-such-file").execute()
        self.assertEqual((caught.exception.status_code, self.reason(caught.exception)),
                         (404, "notFound"))
        self.client.request("POST", "/__emulator/faults",
                             json_body={"status": 403, "reason": "storageQuotaExceeded"})
        with self.assertRaises(HttpError) as caught:
            self.v3.files().list(spaces="appDataFolder").execute()
        self.assertEqual(self.reason(caught.exception), "storageQuotaExceeded")
        self.assertEqual(json.loads(caught.exception.content)["error"]["status"],
                         "PERMISSION_DENIED")


class RequestSweepTests(GoogleClientTestCase):
    """drive_discovery.py's sweep, which `make test` runs over every request the Swift
    suites sent, finds what the documents do not declare, and passes Google's own client."""

    def sweep(self, entries):
        methods = drive_discovery.Methods()
        return [p for entry in entries for p in drive_discovery.request_violations(entry, methods)]

    def test_googles_own_client_passes_the_sweep(self):
        self.create("a.json", b"x")
        self.v3.files().list(spaces="appDataFolder", q="trashed = false", pageSize=5,
                             fields="nextPageToken,files(id,md5Checksum)").execute()
        file_id = self.v3.files().generateIds(space="appDataFolder", count=1).execute()["ids"][0]
        self.create("b.json", b"y", id=file_id)
        self.v2.files().get(fileId=file_id).execute()
        self.v3.files().get_media(fileId=file_id).execute()
        self.v3.revisions().list(fileId=file_id, fields="revisions(id,size)").execute()
        self.assertEqual(self.sweep(self.log()), [])

    def test_a_planted_mistake_fails_the_sweep(self):
        def entry(method, path, **query):
            return {"method": method, "path": path, "query": query}

        planted = {
            "an undeclared query parameter":
                entry("GET", "/drive/v3/files", spaces="appDataFolder", includeTrash="true"),
            "a space outside the list": entry("GET", "/drive/v3/files", spaces="appData"),
            "an alt outside the list": entry("GET", "/drive/v3/files/x", alt="bytes"),
            "an upload type outside the list":
                entry("POST", "/upload/drive/v3/files", uploadType="chunked"),
            "a fields path the schema lacks":
                entry("GET", "/drive/v3/files", fields="files(id,md5checksum)"),
            "a v2 field on v3": entry("GET", "/drive/v3/files/x", fields="etag"),
            "a path that is no method": entry("GET", "/drive/v3/file/x"),
            "a page size that is no integer": entry("GET", "/drive/v3/files", pageSize="ten"),
        }
        for what, request in planted.items():
            with self.subTest(what):
                self.assertEqual(len(self.sweep([request])), 1, what)
        self.assertEqual(self.sweep([entry("PUT", "/upload/drive/v3/files", uploadType="resumable",
                                           upload_id="REDACTED")]), [],
                         "a session URI is the server's, not a method's")

    def test_the_sweep_reads_the_log_the_environment_names(self):
        folder = tempfile.mkdtemp()
        log = os.path.join(folder, "requests.jsonl")
        environment = dict(os.environ, GOOGLE_EMULATOR_REQUEST_LOG=log)
        process, base = start_emulator(environment=environment)
        try:
            grant = Client(base).json("POST", "/__emulator/tokens", json_body={})[2]
            auth = {"Authorization": f"Bearer {grant['access_token']}"}
            Client(base).request("GET", "/drive/v3/files?spaces=appDataFolder", headers=auth)
            Client(base).request("GET", "/drive/v3/files?spaces=appDataFolder&bogus=1", headers=auth)
        finally:
            process.stdin.close()
            process.wait(timeout=10)
            process.stdout.close()
        result = subprocess.run([sys.executable, drive_discovery.__file__, "sweep", log],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(result.stderr.strip().splitlines(),
                         ["GET /drive/v3/files: query parameter 'bogus' is not declared by "
                          "drive.files.list"])
        with open(log) as handle:
            self.assertNotIn("ya29.emu-", handle.read(), "the log holds no token")


class DiscoveryAgreementTests(unittest.TestCase):
    def test_the_emulators_field_lists_match_the_discovery_documents(self):
        with open(drive_discovery.FIELDS_FILE) as handle:
            carried = json.load(handle)
        self.assertEqual(drive_discovery.field_differences(carried, drive_discovery.expected_fields()), [])

    def test_a_drifted_field_list_is_reported(self):
        expected = drive_discovery.expected_fields()
        drifted = json.loads(json.dumps(expected))
        del drifted["v3"]["File"]["md5Checksum"]
        drifted["v3"]["File"]["md5checksum"] = None
        lines = drive_discovery.field_differences(drifted, expected)
        self.assertEqual(len(lines), 2)
        self.assertTrue(all("drive_fields.json: v3/File/md5" in line for line in lines), lines)


if __name__ == "__main__":
    unittest.main()
