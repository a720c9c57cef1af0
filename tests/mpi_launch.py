"""How MPI ranks are started here: which mpiexec, and what its
implementation needs.  tests/scaling/test_mpi.py and scripts/gpu-test.sh's heat_mpi
step both ask this file, so they launch alike.

The mpiexec must belong to the MPI library that mpi4py loads: Open MPI's
launcher cannot start MPICH's ranks, nor the other way round (each rank
would be a world of one).  The candidates, the mpiexec beside this Python
(where PyPI's mpich wheel puts it in a venv) and then the one on PATH (where
scripts/gpu-test.sh puts the carried wheel's, while /usr/bin/mpiexec beside
/usr/bin/python3 may be Open MPI's), are matched against mpi4py's
MPI_Get_library_version, asked in a child that does not initialise MPI.
`mpiexec --version` tells the implementations apart:

    Open MPI 4     mpiexec (OpenRTE) 4.1.6 ... http://www.open-mpi.org/...
    Open MPI 5     mpiexec (Open MPI) 5.0.7 (PRRTE's own prterun: "(PRRTE)")
    MPICH          HYDRA build details: ... (Intel MPI and MVAPICH run Hydra too)

Open MPI refuses to start as root (a container, the GPU machine) without
--allow-run-as-root, and refuses more ranks than the cores it counts
(physical cores: a two-vCPU machine may have one) without --oversubscribe;
Hydra needs neither.

    python -P tests/mpi_launch.py RANKS COMMAND [ARG...]   COMMAND over RANKS ranks
    python -P tests/mpi_launch.py --why-not   why ranks cannot start here, or nothing

The first prints the mpiexec command on stderr and becomes it; where ranks
cannot start it says why on stderr and exits with status 2.
"""
import functools
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys

OPEN_MPI, MPICH = "Open MPI", "MPICH"
SIGNS = [(OPEN_MPI, re.compile(r"Open MPI|OpenRTE|PRRTE|open-mpi\.org")),
         (MPICH, re.compile(r"HYDRA|MPICH|Intel\(R\) MPI|MVAPICH"))]
LIBRARY_VERSION = ("import mpi4py\nmpi4py.rc.initialize = False\n"
                   "from mpi4py import MPI\nprint(MPI.Get_library_version())")


def implementation(text):
    """OPEN_MPI or MPICH: whose `mpiexec --version` output, or MPI library
    version string, text is; None for neither."""
    for name, sign in SIGNS:
        if sign.search(text):
            return name
    return None


def flags(impl, root):
    """The options an mpiexec of implementation impl needs before -n, run
    by root or not."""
    if impl != OPEN_MPI:
        return []
    return ["--oversubscribe", *(["--allow-run-as-root"] if root else [])]


def version_text(exe):
    """What `exe --version` prints ("" when it cannot run)."""
    try:
        proc = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout + proc.stderr


def library_text():
    """(mpi4py's MPI library version string, None), or (None, why not)."""
    if importlib.util.find_spec("mpi4py") is None:
        return None, "mpi4py not installed"
    proc = subprocess.run([sys.executable, "-P", "-c", LIBRARY_VERSION], capture_output=True,
                          text=True, timeout=120)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        return None, f"mpi4py cannot load an MPI library: {last}"
    return proc.stdout, None


def candidates():
    """The mpiexec beside this Python, then the one on PATH (once if the same)."""
    found = []
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.access(beside, os.X_OK):
        found.append(beside)
    on_path = shutil.which("mpiexec")
    if on_path and not (found and os.path.samefile(on_path, beside)):
        found.append(on_path)
    return found


def choose(exes, library, root):
    """(the first of exes that belongs to the MPI library whose version
    string is library, with its flags, None), or (None, why none)."""
    wanted = implementation(library)
    if wanted is None:
        first = (library.strip().splitlines() or ["?"])[0]
        return None, f"mpi4py's MPI library is neither Open MPI nor MPICH ({first})"
    if not exes:
        return None, "no mpiexec next to python or on PATH"
    seen = []
    for exe in exes:
        impl = implementation(version_text(exe))
        if impl == wanted:
            return [exe, *flags(impl, root)], None
        seen.append(f"{exe} is {impl}'s" if impl else f"{exe} is neither Open MPI's nor MPICH's")
    return None, f"mpi4py loads {wanted}'s MPI library, but " + " and ".join(seen)


@functools.cache
def launcher():
    """choose() for this machine and user: (mpiexec and flags, None) or
    (None, why not).  Asked once per process."""
    library, why = library_text()
    if why:
        return None, why
    return choose(candidates(), library, os.geteuid() == 0)


def command(ranks, argv):
    """The command line that runs argv over `ranks` ranks."""
    prefix, why = launcher()
    if prefix is None:
        raise RuntimeError(f"cannot start MPI ranks: {why}")
    return [*prefix, "-n", str(ranks), *argv]


def main(argv):
    if argv == ["--why-not"]:
        print(launcher()[1] or "")
        return 0
    if len(argv) < 2 or not argv[0].isdigit():
        print(__doc__, file=sys.stderr)
        return 2
    why = launcher()[1]
    if why:
        print(f"mpi_launch: {why}", file=sys.stderr)
        return 2
    cmd = command(int(argv[0]), argv[1:])
    print(f"mpi_launch: {shlex.join(cmd)}", file=sys.stderr, flush=True)
    os.execv(cmd[0], cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
