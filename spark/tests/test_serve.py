"""`serve` without Spark: a served call's answer lines go to its connection, its failure is an
error line (never an exit of the server), and the server ends when a watched process has gone."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from typing import Any
from unittest import mock

from recount_spark import cli, wire
from recount_spark import session as sessions


class FakeSession:
    """What `serve` asks of its shared session: a catalog whose cache it clears after each call."""

    def __init__(self) -> None:
        self.cleared = 0
        self.catalog = self

    def clearCache(self) -> None:
        self.cleared += 1


def lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


class ServedCalls(unittest.TestCase):
    def setUp(self) -> None:
        self.out = io.StringIO()
        wire.OUT = self.out

    def tearDown(self) -> None:
        wire.OUT = None

    def test_a_refused_argument_is_an_error_line_not_an_exit(self) -> None:
        cli.main(["--warehouse", "wh", "run"], served=True)  # run without --world
        said = lines(self.out.getvalue())
        self.assertEqual([s["event"] for s in said], ["error"])
        self.assertIn("refused its arguments", said[0]["message"])

    def test_unserved_the_same_refusal_exits(self) -> None:
        with self.assertRaises(SystemExit), mock.patch("sys.stderr", io.StringIO()):
            cli.main(["--warehouse", "wh", "run"])

    def test_a_failing_call_sends_its_traceback_then_one_error_line(self) -> None:
        cli.main(["serve", "--socket", "x"], served=True)
        said = lines(self.out.getvalue())
        self.assertEqual([s["event"] for s in said], ["log", "error"])
        self.assertIn("Traceback", said[0]["text"])
        self.assertEqual(said[1]["message"], "ValueError: a served call cannot serve")


class TheServer(unittest.TestCase):
    def test_a_call_round_trips_and_the_server_ends_with_its_watched_process(self) -> None:
        fake = FakeSession()
        watched = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        with tempfile.TemporaryDirectory() as d, mock.patch.object(sessions, "session", return_value=fake):
            path = os.path.join(d, "s.sock")
            args = cli.parser().parse_args(["--queries", "Q", "serve", "--socket", path, "--watch", str(watched.pid)])
            with mock.patch("sys.stdout", io.StringIO()):
                server = threading.Thread(target=cli.cmd_serve, args=(args,))
                server.start()
                try:
                    for _ in range(100):
                        if os.path.exists(path):
                            break
                        time.sleep(0.05)
                    said = self.call(path, {"argv": ["serve", "--socket", "y"], "queries": "Q"})
                    self.assertEqual([s["event"] for s in said], ["log", "error"])
                    other = self.call(path, {"argv": ["serve", "--socket", "y"], "queries": "another build"})
                    self.assertIn("restart `recount spark serve`", other[0]["message"])
                    master = self.call(path, {"argv": ["--master", "yarn", "serve", "--socket", "y"], "queries": "Q"})
                    self.assertIn("runs on local[2], not yarn", master[0]["message"])
                    here = os.getcwd()
                    where = {"gold": lambda _: wire.emit("result", cwd=os.getcwd())}
                    with mock.patch.dict(cli.COMMANDS, where):
                        elsewhere = self.call(path, {"argv": ["gold", "--date", "2026-10-20"], "queries": "Q", "cwd": d})
                    self.assertEqual(elsewhere[0]["cwd"], os.path.realpath(d), "a call runs where its caller is")
                    self.assertEqual(os.getcwd(), here, "the server goes back to its own directory after a call")
                    self.assertEqual(fake.cleared, 4, "the cache is cleared after every call")
                finally:
                    watched.kill()
                    watched.wait()
                    server.join(10)
                    sessions.share(None)
            self.assertFalse(server.is_alive(), "the server ends when its watched process has gone")
            self.assertFalse(os.path.exists(path), "and takes its socket away")

    def call(self, path: str, request: dict[str, Any]) -> list[dict[str, Any]]:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(path)
            s.sendall((json.dumps(request) + "\n").encode())
            got = b""
            while chunk := s.recv(65536):
                got += chunk
        return lines(got.decode())


if __name__ == "__main__":
    unittest.main()
