"""Checking programs in a child process, so that a kernel that crashes the
process or never ends is a result ("crash", "hang") and not the end of
the run.

``Isolated(target)`` starts ``python -P -m fuzz.isolate <target>`` with
tests/ on its path; ``check(program)`` sends it the pickled program on
stdin (``check_index(seed, index)`` only the program's number) and reads
the pickled Outcome from stdout.  When the child dies or
does not answer within ``timeout`` seconds, the Outcome says so and the
next check starts a new child.  (A kernel on the CPU target cannot be
interrupted, so a hang can only be ended by ending the process.)
"""
import os
import pickle
import select
import signal
import struct
import subprocess
import sys

from .run import Outcome

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _send(stream, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _recv(stream):
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError
    (size,) = struct.unpack("<Q", head)
    return pickle.loads(stream.read(size))


class Isolated:
    """check(program, filename) in a child process on gpujit target `target`."""

    def __init__(self, target, timeout=60.0, python=sys.executable):
        self.target, self.timeout, self.python = target, timeout, python
        self.proc = None

    def start(self):
        path = [TESTS] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
        self.proc = subprocess.Popen([self.python, "-P", "-m", "fuzz.isolate", self.target],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        if _recv(self.proc.stdout) != "ready":     # the timeout counts from here
            raise RuntimeError("the fuzzer's child process did not start")

    def stop(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc.stdin.close()
            self.proc.stdout.close()
            self.proc = None

    def check(self, program, filename="<fuzz>"):
        """check(program, filename) in the child: an Outcome."""
        return self._ask(("program", program, filename))

    def check_index(self, seed, index, size=1.0):
        """check() of make_program(seed, index, size), made in the child (so that
        several children make and check programs in parallel): an Outcome."""
        return self._ask(("index", seed, index, size))

    def _ask(self, request):
        if self.proc is None or self.proc.poll() is not None:
            self.stop()
            self.start()
        try:
            _send(self.proc.stdin, request)
            ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
            if ready:
                outcome = _recv(self.proc.stdout)
                if outcome.kind == "launch":
                    self.stop()     # a kernel fault ends the CUDA context: a fresh child
                return outcome
        except (EOFError, BrokenPipeError, pickle.UnpicklingError):
            pass
        if self.proc.poll() is None:
            self.stop()
            return Outcome("hang", f"no result within {self.timeout:g} s")
        code = self.proc.returncode
        self.stop()
        name = signal.Signals(-code).name if code < 0 else f"exit status {code}"
        return Outcome("crash", f"the process ended: {name}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def serve(target):
    """The child: checks the programs it reads from stdin, answers on stdout."""
    import gpujit

    from .gen import make_program
    from .run import check
    gpujit.set_target(target)
    # Answers go to the pipe that was fd 1; fd 1 (where kernels print on the CPU
    # target) and sys.stdout become stderr, so nothing else can reach the pipe.
    stdin, stdout = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _send(stdout, "ready")
    while True:
        try:
            request = _recv(stdin)
        except EOFError:
            return
        if request[0] == "index":
            _, seed, index, size = request
            program, filename = make_program(seed, index, size), f"<fuzz {seed}:{index}>"
        else:
            _, program, filename = request
        _send(stdout, check(program, filename))


if __name__ == "__main__":
    serve(sys.argv[1])
