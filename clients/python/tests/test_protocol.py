"""The client against a real Unix socket whose other end plays the agent (run by PythonClientIT)."""
import os
import pathlib
import socket
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from ferry_checkpoint import FerryCheckpoint, ProtocolError, MAX_LINE  # noqa: E402


class AgentEnd:
    """Listens where FERRY_SOCKET points, accepts the rank, and reads and writes lines."""

    def __init__(self, directory):
        self.path = os.path.join(directory, "agent.sock")
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.path)
        self.server.listen(1)
        self.conn = None
        self.buf = b""

    def accept(self):
        self.conn, _ = self.server.accept()
        self.conn.settimeout(10)

    def line(self):
        while b"\n" not in self.buf:
            chunk = self.conn.recv(4096)
            if not chunk:
                raise EOFError("the rank closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode("ascii")

    def send(self, raw):
        self.conn.sendall(raw)

    def close(self):
        if self.conn:
            self.conn.close()
        self.server.close()


class ProtocolTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.agent = AgentEnd(self.tmp.name)
        self.env = {"FERRY_SOCKET": self.agent.path, "FERRY_RANK": "3", "FERRY_NRANKS": "4"}

    def tearDown(self):
        self.agent.close()
        self.tmp.cleanup()

    def connected(self, env=None):
        ferry = FerryCheckpoint(env or self.env)
        t = threading.Thread(target=self.agent.accept)
        t.start()
        ferry.connect()
        t.join(10)
        self.assertEqual("HELLO 3", self.agent.line())
        return ferry

    def test_a_checkpoint_is_written_into_its_directory_and_answered_done(self):
        ferry = self.connected()
        d = pathlib.Path(self.tmp.name, "7")
        d.mkdir()
        self.agent.send(b"CHECKPOINT 7 " + str(d).encode() + b"\n")
        seen = ferry.poll(lambda directory, g: (directory / "state").write_text("g%d" % g), timeout=10)
        self.assertEqual([7], seen)
        self.assertEqual("DONE 7", self.agent.line())
        self.assertEqual("g7", (d / "state").read_text())
        self.assertEqual([], ferry.poll(lambda directory, g: None), "nothing pending: poll returns at once")
        ferry.close()

    def test_a_handler_that_raises_answers_fail_on_one_line(self):
        ferry = self.connected()

        def broken(directory, generation):
            raise OSError("disk full\nreally")

        self.agent.send(b"CHECKPOINT 2 /nowhere\n")
        ferry.poll(broken, timeout=10)
        self.assertEqual("FAIL 2 OSError: disk full really", self.agent.line())
        ferry.close()

    def test_serve_answers_on_its_own_thread_holding_the_lock(self):
        ferry = self.connected()
        lock = threading.Lock()
        held = []
        ferry.serve(lambda directory, g: held.append(lock.locked()), lock)
        self.agent.send(b"CHECKPOINT 1 /x\r\n")
        self.assertEqual("DONE 1", self.agent.line())
        self.assertEqual([True], held)
        ferry.close()

    def test_lines_the_protocol_does_not_allow_are_protocol_errors(self):
        for bad in (b"CHECKPOINT x /d\n", b"HELLO 1\n", b"CHECKPOINT 1\n", b"\xff\xfe\n", b"y" * (MAX_LINE + 10)):
            with self.subTest(bad=bad[:20]):
                ferry = self.connected()
                self.agent.send(bad)
                with self.assertRaises(ProtocolError):
                    ferry.poll(lambda directory, g: None, timeout=10)
                ferry.close()
                self.agent.conn.close()

    def test_restart_data_rejected_is_said_with_its_generation(self):
        env = dict(self.env, FERRY_RESTART_DIR=self.tmp.name, FERRY_RESTART_GENERATION="5")
        ferry = self.connected(env)
        self.assertEqual(pathlib.Path(self.tmp.name), ferry.restart_dir)
        ferry.complete_restart(False, "checksum mismatch")
        self.assertEqual("RESTART_FAIL 5 checksum mismatch", self.agent.line())
        ferry.close()

    def test_outside_ferry_nothing_connects(self):
        ferry = FerryCheckpoint({})
        self.assertFalse(ferry.managed)
        self.assertIs(ferry, ferry.connect())
        self.assertEqual([], ferry.poll(lambda directory, g: None))
        with self.assertRaises(RuntimeError):
            ferry.rank


if __name__ == "__main__":
    unittest.main()
