"""The Python client's parts that need no server: the WebSocket frames, the follow cursor, the
ignore rules of an upload, where the server and token come from, and the contract with the
OpenAPI document (``jobdeck/_api.py``, generated from it by ``npm run clients:generate``)."""
from __future__ import annotations

import dataclasses
import io
import os
import pathlib
import shutil
import struct
import tarfile
import gzip
import tempfile
import unittest
from typing import Any, Dict, Set

from jobdeck import _api, _ws
from jobdeck._config import resolve_token, resolve_url
from jobdeck._follow import Cursor, decode_chunk
from jobdeck._pack import IgnoreRules, local_file_mounts, pack_folder, relative_workdir
from jobdeck.client import JobdeckClient, _list_query, _submit_body
from jobdeck.errors import BadRequestError
from jobdeck.models import AttemptInfo, JobInfo, JobStatus, LogChunk, TaskInfo


def server_frame(op: int, payload: bytes, fin: bool = True) -> bytes:
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | op])
    if n < 126:
        head += bytes([n])
    elif n < 1 << 16:
        head += bytes([126]) + struct.pack(">H", n)
    else:
        head += bytes([127]) + struct.pack(">Q", n)
    return head + payload


def log_frame(task: int, attempt: int, offset: int, data: bytes, rank: int = 0) -> bytes:
    head = struct.pack(">BBHIQ", 1, 2 if rank else 1, task, attempt, offset)
    return head + (struct.pack(">I", rank) if rank else b"") + data


class Frames(unittest.TestCase):
    def test_the_accept_key_of_rfc_6455(self) -> None:
        self.assertEqual(_ws._accept_key("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")

    def test_messages_come_whole_however_the_bytes_are_cut(self) -> None:
        big = bytes(range(256)) * 300  # a 64-bit length
        wire = server_frame(_ws.OP_TEXT, b'{"type":"hello"}') + server_frame(_ws.OP_BINARY, b"ab", fin=False) + server_frame(_ws.OP_PING, b"p") + server_frame(_ws.OP_CONT, b"cd") + server_frame(_ws.OP_BINARY, big)
        # Cut at every byte of the head (lengths, headers split anywhere), then in bigger steps.
        for step in (1, 3, 7, 4096, len(wire)):
            p = _ws.FrameParser()
            got = []
            cuts = list(range(0, 64, step)) + list(range(64, len(wire), max(step, 4096)))
            for a, b in zip(cuts, cuts[1:] + [len(wire)]):
                got += p.feed(wire[a:b])
            self.assertEqual(got, [(_ws.OP_TEXT, b'{"type":"hello"}'), (_ws.OP_PING, b"p"), (_ws.OP_BINARY, b"abcd"), (_ws.OP_BINARY, big)])

    def test_a_masked_server_frame_is_refused(self) -> None:
        with self.assertRaises(_ws.ProtocolViolation):
            _ws.FrameParser().feed(_ws.encode_frame(_ws.OP_TEXT, b"x"))

    def test_client_frames_are_masked(self) -> None:
        f = _ws.encode_frame(_ws.OP_TEXT, b'{"type":"ping"}', mask=b"\x01\x02\x03\x04")
        self.assertEqual(f[1] & 0x80, 0x80)
        body = bytes(c ^ b"\x01\x02\x03\x04"[i % 4] for i, c in enumerate(f[6:]))
        self.assertEqual(body, b'{"type":"ping"}')

    def test_log_frames_decode(self) -> None:
        self.assertEqual(decode_chunk(log_frame(2, 3, 2**40, b"\xff")), LogChunk(2, 3, 2**40, b"\xff"))
        self.assertEqual(decode_chunk(log_frame(0, 1, 5, b"r", rank=3)), LogChunk(0, 1, 5, b"r", 3))


def start(task: int, attempt: int, eid: int) -> Dict[str, Any]:
    return {"type": "attempt", "phase": "start", "task": task, "attempt": attempt, "status": "RUNNING", "eventId": eid}


def end(task: int, attempt: int, eid: int, status: str = "SUCCEEDED") -> Dict[str, Any]:
    return {"type": "attempt", "phase": "end", "task": task, "attempt": attempt, "status": status, "eventId": eid}


class FollowCursor(unittest.TestCase):
    def test_overlapping_bytes_after_a_resume_are_handed_on_once(self) -> None:
        c = Cursor()
        c.message(start(0, 1, 3))
        self.assertEqual(c.chunk(LogChunk(0, 1, 0, b"hello ")), [LogChunk(0, 1, 0, b"hello ")])
        self.assertIn("offset=6", c.query(True))
        self.assertIn("since=3", c.query(True))
        # A resumed stream repeats the start and sends from an older offset.
        c.message(start(0, 1, 3))
        self.assertEqual(c.chunk(LogChunk(0, 1, 2, b"llo world")), [LogChunk(0, 1, 6, b"world")])
        self.assertEqual(c.chunk(LogChunk(0, 1, 0, b"hello")), [])
        c.message(end(0, 1, 9))
        self.assertIn("task=0&attempt=2&offset=0", c.query(True))
        self.assertIn("since=9", c.query(True))
        c.message({"type": "end", "status": "SUCCEEDED", "follow": True})
        self.assertTrue(c.done)
        self.assertEqual(c.status, "SUCCEEDED")

    def test_a_status_message_repeated_after_a_resume_is_dropped(self) -> None:
        c = Cursor(events=True)
        msg = {"type": "job", "status": "RUNNING", "eventId": 4}
        self.assertEqual(len(c.message(msg)), 1)
        self.assertEqual(c.message(msg), [])

    def test_each_rank_resumes_at_its_own_offset(self) -> None:
        c = Cursor()
        c.message(dict(start(0, 1, 2), nodes=2))
        c.chunk(LogChunk(0, 1, 0, b"abc"))
        c.chunk(LogChunk(0, 1, 0, b"z", 1))
        self.assertIn("offset=3&offsets=3%2C1", c.query(True))

    def test_a_scoped_task_ends_with_its_own_status(self) -> None:
        c = Cursor(scope_task=0)
        c.message(start(0, 1, 2))
        c.message(end(0, 1, 3, "FAILED"))
        c.message(start(0, 2, 4))
        self.assertEqual(c.chunk(LogChunk(1, 1, 0, b"other task")), [])
        c.message(end(0, 2, 5, "SUCCEEDED"))
        c.message({"type": "task", "task": 0, "status": "SUCCEEDED", "eventId": 6})
        self.assertTrue(c.done)
        self.assertEqual(c.status, "SUCCEEDED")


class Ignore(unittest.TestCase):
    def test_git_pattern_rules(self) -> None:
        r = IgnoreRules("# comment\n*.log\n!keep.log\n/build/\ndocs/**/*.tmp\n**/cache\n")
        cases = {
            ("a.log", False): True,
            ("sub/b.log", False): True,
            ("keep.log", False): False,
            ("build", True): True,
            ("build", False): False,
            ("sub/build", True): False,
            ("docs/x.tmp", False): True,
            ("docs/a/b/x.tmp", False): True,
            ("x.tmp", False): False,
            ("deep/er/cache", True): True,
            ("main.py", False): False,
        }
        for (path, is_dir), want in cases.items():
            self.assertEqual(r.ignores(path, is_dir), want, path)

    def test_a_folder_packs_without_what_is_ignored(self) -> None:
        d = pathlib.Path(tempfile.mkdtemp(prefix="jobdeck-py-pack-"))
        self.addCleanup(shutil.rmtree, d, True)
        (d / "src").mkdir()
        (d / "src" / "main.py").write_text("print(1)\n")
        (d / "src" / "out.log").write_text("x")
        (d / "src" / ".skyignore").write_text("secret.txt\n")
        (d / "src" / "secret.txt").write_text("s")
        (d / ".git").mkdir()
        (d / ".git" / "HEAD").write_text("ref")
        (d / ".gitignore").write_text("*.log\n")
        data, entries = pack_folder(str(d), 10**6, "workdir .")
        self.assertEqual(entries, [".gitignore", "src/", "src/.skyignore", "src/main.py"])
        with tarfile.open(fileobj=io.BytesIO(gzip.decompress(data))) as t:
            self.assertEqual(t.getnames(), [".gitignore", "src", "src/.skyignore", "src/main.py"])
        with self.assertRaisesRegex(BadRequestError, r"workdir \.: the upload is \d+ bytes \(compressed\); the limit is 10 bytes"):
            pack_folder(str(d), 10, "workdir .")

    def test_a_file_with_two_hard_links_is_packed_twice_as_a_file(self) -> None:
        d = pathlib.Path(tempfile.mkdtemp(prefix="jobdeck-py-pack-"))
        self.addCleanup(shutil.rmtree, d, True)
        (d / "a.txt").write_bytes(b"same bytes\n")
        os.link(d / "a.txt", d / "b.txt")
        data, _ = pack_folder(str(d), 10**6, "workdir .")
        with tarfile.open(fileobj=io.BytesIO(gzip.decompress(data))) as t:
            members = t.getmembers()
            self.assertEqual([(m.name, m.isreg(), m.size) for m in members], [("a.txt", True, 11), ("b.txt", True, 11)])
            for m in members:
                f = t.extractfile(m)
                assert f is not None
                self.assertEqual(f.read(), b"same bytes\n")

    def test_the_yaml_names_its_relative_workdir_and_local_mounts(self) -> None:
        text = "name: p\n---\nworkdir: ./src  # here\nfile_mounts:\n  /data: ../data\n  ~/model: 's3://bucket/m'\n  conf.txt: \"c.txt\"\nrun: x\n---\nworkdir: ~/abs\n"
        self.assertEqual(relative_workdir(text, "/base"), ("/base/src", "./src"))
        self.assertEqual(local_file_mounts(text, "/base"), {"/data": "/data", "conf.txt": "/base/c.txt"})
        with self.assertRaisesRegex(BadRequestError, "different relative workdirs"):
            relative_workdir("workdir: a\n---\nworkdir: b\n", "/base")


class Config(unittest.TestCase):
    def test_url_from_the_argument_the_environment_or_host_and_port(self) -> None:
        self.assertEqual(resolve_url("example.org:8080/", {}), "http://example.org:8080")
        self.assertEqual(resolve_url(None, {"JOBDECK_URL": "https://j.example/"}), "https://j.example")
        self.assertEqual(resolve_url(None, {"HOST": "0.0.0.0", "PORT": "4000"}), "http://127.0.0.1:4000")
        self.assertEqual(resolve_url(None, {"HOST": "::1"}), "http://[::1]:3000")
        with self.assertRaisesRegex(BadRequestError, "JOBDECK_URL: expected an http"):
            resolve_url(None, {"JOBDECK_URL": "ftp://x"})

    def test_token_from_the_argument_the_environment_or_the_local_file(self) -> None:
        home = tempfile.mkdtemp(prefix="jobdeck-py-home-")
        self.addCleanup(shutil.rmtree, home, True)
        self.assertEqual(resolve_token("jd_arg", {"JOBDECK_TOKEN": "jd_env"})[0], "jd_arg")
        self.assertEqual(resolve_token(None, {"JOBDECK_TOKEN": "jd_env"})[0], "jd_env")
        none, hint = resolve_token(None, {"JOBDECK_HOME": home})
        self.assertIsNone(none)
        self.assertEqual(hint, f"no token found at {os.path.join(home, 'token')} (set JOBDECK_TOKEN or JOBDECK_HOME)")
        pathlib.Path(home, "token").write_text("jd_file\n")
        self.assertEqual(resolve_token(None, {"JOBDECK_HOME": home})[0], "jd_file")


class Contract(unittest.TestCase):
    """What this client sends and reads is in the OpenAPI document (as _api.py was generated from it)."""

    def fields(self, schema: str) -> Set[str]:
        return {k.rstrip("?") for k in _api.SCHEMAS[schema]}

    def test_operations(self) -> None:
        for op in ("submitJob", "listJobs", "getJob", "deleteJob", "cancelJob", "rerunJob", "uploadFolder", "streamJob"):
            self.assertIn(op, _api.OPERATIONS)

    def test_models_read_fields_the_document_has(self) -> None:
        for cls, schema in ((JobInfo, "JobSummary"), (TaskInfo, "TaskSummary"), (AttemptInfo, "AttemptView")):
            names = {f.metadata["api"] for f in dataclasses.fields(cls) if "api" in f.metadata}
            self.assertLessEqual(names, self.fields(schema), cls.__name__)
        self.assertLessEqual({"metadata", "specYaml", "tasks"}, self.fields("JobDetail"))
        self.assertIn("attemptList", self.fields("TaskView"))
        self.assertEqual([s.value for s in JobStatus], _api.SCHEMAS["JobStatus"])
        self.assertLessEqual({"id", "warnings"}, self.fields("SubmitResult"))
        self.assertLessEqual({"jobs", "nextCursor"}, self.fields("JobList"))
        self.assertIn("cancelled", self.fields("CancelResult"))
        self.assertIn("hash", self.fields("UploadManifest"))

    def test_requests_send_fields_the_document_has(self) -> None:
        body = _submit_body(None, "true", name="n", envs={"A": "1"}, secrets={"S": "2"}, priority=1, queue="q", metadata={"m": 1}, submission_id="s")
        self.assertLessEqual(set(body) | {"yaml", "spec", "filename", "workdirUpload", "fileMountUploads"}, self.fields("SubmitRequest"))
        q = _list_query(["RUNNING"], "n", "q", "me", {"k": "v"}, "2026-01-01", "2026-02-01", "oldest")
        self.assertLessEqual({k for k, _ in q} | {"limit", "cursor"}, set(_api.QUERY["listJobs"]))
        self.assertLessEqual({"task", "attempt", "offset", "offsets", "follow", "since", "rank"}, set(_api.QUERY["streamJob"]))
        self.assertLessEqual({"origin"}, self.fields("RerunRequest"))

    def test_a_file_name_given_as_text_is_refused_with_the_way_to_submit_it(self) -> None:
        c = JobdeckClient("http://127.0.0.1:1", token="jd_t")
        self.assertEqual(repr(c), "JobdeckClient('http://127.0.0.1:1')")
        with self.assertRaisesRegex(BadRequestError, r"pass pathlib.Path\('train.yaml'\)"):
            c.submit("train.yaml")


if __name__ == "__main__":
    unittest.main()
