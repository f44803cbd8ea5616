"""Client of Ferry's cooperative capture protocol, version 1 (docs/protocol.md).

A rank started by ``ferry run`` finds in its environment where the node's agent listens
(``FERRY_SOCKET``) and, after a restart, the verified files of the generation it resumes
from (``FERRY_RESTART_DIR``). This module speaks the socket protocol with the standard
library only::

    from ferry_checkpoint import FerryCheckpoint

    ferry = FerryCheckpoint()
    if ferry.restart_dir:                      # after a restart
        state = load(ferry.restart_dir)
    ferry.connect()                            # says HELLO: from now on the agent asks, not signals
    for step in range(steps):
        train_one_step(state)
        ferry.poll(lambda d, g: save(state, d))  # at a safe point: answer a pending request

``poll`` runs the save on the caller's thread between steps, so the state is consistent
without a lock; the agent waits for the answer (up to the job's capture timeout, 60 s by
default), so poll at least that often. ``serve(handler, lock)`` answers on a background
thread instead, holding ``lock`` (if given) while the handler runs.
"""

import os
import pathlib
import queue
import socket
import threading

__all__ = ["FerryCheckpoint", "ProtocolError", "MAX_LINE"]

MAX_LINE = 4096


class ProtocolError(ValueError):
    """The agent said something protocol v1 does not allow, or the line was too long."""


class FerryCheckpoint:
    """One rank's side of the protocol. Not for use by several threads at once, except as documented."""

    def __init__(self, env=None):
        self._env = dict(os.environ if env is None else env)
        self._sock = None
        self._requests = queue.Queue()
        self._send_lock = threading.Lock()
        self._reader = None

    # --- what the agent told this rank through its environment ---

    @property
    def managed(self):
        """Whether this process runs under a Ferry agent in socket mode (FERRY_SOCKET is set)."""
        return "FERRY_SOCKET" in self._env

    @property
    def rank(self):
        return int(self._required("FERRY_RANK"))

    @property
    def ranks(self):
        return int(self._required("FERRY_NRANKS"))

    @property
    def restart_dir(self):
        """The verified files of the generation to resume from (a pathlib.Path), or None."""
        d = self._env.get("FERRY_RESTART_DIR")
        return pathlib.Path(d) if d else None

    @property
    def restart_generation(self):
        g = self._env.get("FERRY_RESTART_GENERATION")
        return int(g) if g else None

    # --- the socket ---

    def connect(self):
        """Connects to the agent and says HELLO; does nothing when not managed. Returns self."""
        if not self.managed or self._sock is not None:
            return self
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self._required("FERRY_SOCKET"))
        self._sock = s
        self._send("HELLO %d" % self.rank)
        self._reader = threading.Thread(target=self._read_loop, name="ferry-checkpoint-reader", daemon=True)
        self._reader.start()
        return self

    def poll(self, handler, timeout=0.0):
        """Answers the checkpoint requests pending now (waiting up to ``timeout`` seconds for one).

        ``handler(directory, generation)`` writes the rank's state files into ``directory`` (a
        pathlib.Path that exists and is empty); an exception it raises answers FAIL and the
        generation fails, the job goes on. Returns the generations answered.
        """
        answered = []
        while True:
            try:
                item = self._requests.get(timeout=timeout) if timeout > 0 and not answered else self._requests.get_nowait()
            except queue.Empty:
                return answered
            if item is None:  # the agent closed the connection: nothing more will be asked
                self._requests.put(None)
                return answered
            if isinstance(item, BaseException):
                raise item
            generation, directory = item
            self._answer(handler, generation, directory)
            answered.append(generation)

    def serve(self, handler, lock=None):
        """Answers every request on a daemon thread (holding ``lock`` while the handler runs). Returns the thread."""
        self.connect()

        def loop():
            while True:
                item = self._requests.get()
                if item is None or isinstance(item, BaseException):
                    return
                generation, directory = item
                if lock is None:
                    self._answer(handler, generation, directory)
                else:
                    with lock:
                        self._answer(handler, generation, directory)

        t = threading.Thread(target=loop, name="ferry-checkpoint-client", daemon=True)
        t.start()
        return t

    def complete_restart(self, valid, reason=""):
        """After checking ``restart_dir``: with ``valid`` false, every rank rolls back to the next
        older established generation and this one is never chosen again (as SCR_Complete_restart)."""
        if valid or self.restart_generation is None or not self.managed:
            return
        self.connect()
        self._send("RESTART_FAIL %d %s" % (self.restart_generation, _one_line(reason)))

    def close(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    # --- internals ---

    def _answer(self, handler, generation, directory):
        try:
            handler(directory, generation)
        except Exception as e:  # the generation fails; the job goes on
            self._send("FAIL %d %s" % (generation, _one_line("%s: %s" % (type(e).__name__, e))))
        else:
            self._send("DONE %d" % generation)

    def _read_loop(self):
        buf = b""
        try:
            while True:
                chunk = self._sock.recv(8192)
                if not chunk:
                    self._requests.put(None)
                    return
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    self._requests.put(_parse_checkpoint(line))
                if len(buf) > MAX_LINE:
                    raise ProtocolError("a line from the agent is longer than %d bytes" % MAX_LINE)
        except (OSError, ValueError) as e:  # ValueError: ProtocolError, or bytes that are not ASCII
            self._requests.put(e if isinstance(e, ProtocolError) else
                               ProtocolError(str(e)) if isinstance(e, ValueError) else None)

    def _send(self, text):
        data = (text + "\n").encode("ascii", "replace")
        if len(data) > MAX_LINE:
            data = data[:MAX_LINE - 1] + b"\n"
        with self._send_lock:
            self._sock.sendall(data)

    def _required(self, name):
        v = self._env.get(name)
        if v is None:
            raise RuntimeError("%s is not set: is this process run by ferry run?" % name)
        return v


def _parse_checkpoint(line):
    """``CHECKPOINT <generation> <dir>`` as (generation, pathlib.Path); anything else is a ProtocolError."""
    text = line.decode("ascii", "strict").rstrip("\r")
    parts = text.split(" ", 2)
    if len(parts) != 3 or parts[0] != "CHECKPOINT" or not parts[1].isdigit() or not parts[2]:
        raise ProtocolError("unexpected line from the agent: %r" % text)
    return int(parts[1]), pathlib.Path(parts[2])


def _one_line(s):
    return str(s).replace("\n", " ").replace("\r", " ")
