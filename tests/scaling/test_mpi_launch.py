"""tests/mpi_launch.py, which decides how tests/scaling/test_mpi.py and
scripts/gpu-test.sh start MPI ranks: implementations told apart by what
`mpiexec --version` prints (recorded outputs of Open MPI 4 and 5, PRRTE,
MPICH's Hydra and Intel MPI, then fake mpiexecs that print them), the
options each needs (Open MPI run by root: --allow-run-as-root), which
mpiexec is chosen for the MPI library mpi4py loads, and, where this machine
has MPI, two real ranks started through it."""
import os
import subprocess
import sys

import pytest

import mpi_launch
from conftest import ROOT, TESTS_DIR

LAUNCH = os.path.join(TESTS_DIR, "mpi_launch.py")
ROOT = os.geteuid() == 0

OPEN_MPI_4 = "mpiexec (OpenRTE) 4.1.6\n\nReport bugs to http://www.open-mpi.org/community/help/\n"
OPEN_MPI_5 = "mpiexec (Open MPI) 5.0.7\n\nReport bugs to https://www.open-mpi.org/community/help/\n"
PRRTE = "prterun (PRRTE) 3.0.9\n\nReport bugs to https://github.com/openpmix/prrte\n"
HYDRA = ("HYDRA build details:\n    Version:                                 5.0.2\n"
         "    Release Date:                            Fri Sep 25 20:45:26 UTC 2026\n"
         "    Process Manager:                         pmi\n")
INTEL = "Intel(R) MPI Library for Linux* OS, Version 2021.13 Build 20240701 (id: 8c5ea1e)\n"
OPEN_MPI_LIBRARY = ("Open MPI v4.1.6, package: Debian OpenMPI, ident: 4.1.6, "
                    "repo rev: v4.1.6, Sep 30, 2023\n")
MPICH_LIBRARY = "MPICH Version:      5.0.2\nMPICH Release date: Fri Sep 25 20:45:26 UTC 2026\n"
OPEN_MPI = mpi_launch.OPEN_MPI
MPICH = mpi_launch.MPICH


@pytest.mark.parametrize("text, impl", [
    (OPEN_MPI_4, OPEN_MPI), (OPEN_MPI_5, OPEN_MPI), (PRRTE, OPEN_MPI), (OPEN_MPI_LIBRARY, OPEN_MPI),
    (HYDRA, MPICH), (INTEL, MPICH), (MPICH_LIBRARY, MPICH),
    ("", None), ("mpiexec: unrecognized option '--version'\n", None),
], ids=["open-mpi-4", "open-mpi-5", "prrte", "open-mpi-library", "hydra", "intel-mpi",
        "mpich-library", "nothing", "neither"])
def test_the_implementation_is_read_off_the_version_text(text, impl):
    assert mpi_launch.implementation(text) == impl


def test_open_mpi_is_allowed_root_and_more_ranks_than_cores_and_hydra_needs_nothing():
    assert mpi_launch.flags(OPEN_MPI, root=True) == ["--oversubscribe", "--allow-run-as-root"]
    assert mpi_launch.flags(OPEN_MPI, root=False) == ["--oversubscribe"]
    assert mpi_launch.flags(MPICH, root=True) == []
    assert mpi_launch.flags(MPICH, root=False) == []


def fake_mpiexec(directory, version, status=0):
    """An executable `mpiexec` in directory: `--version` prints version and
    exits with status; otherwise, as Open MPI's does, it refuses root
    without --allow-run-as-root, and else prints its arguments."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "mpiexec")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                f"if [ \"$1\" = --version ]; then printf '%s' '{version}'; exit {status}; fi\n"
                'case " $* " in *" --allow-run-as-root "*) ;; *)\n'
                '    if [ "$(id -u)" = 0 ]; then\n'
                '        echo "mpiexec has detected an attempt to run as root." >&2; exit 1\n'
                "    fi ;;\n"
                "esac\n"
                'echo "$@"\n')
    os.chmod(path, 0o755)
    return path


def test_the_mpiexec_of_mpi4pys_library_is_chosen(tmp_path):
    ompi = fake_mpiexec(tmp_path / "ompi", OPEN_MPI_4)
    hydra = fake_mpiexec(tmp_path / "mpich", HYDRA)
    assert mpi_launch.choose([ompi, hydra], MPICH_LIBRARY, root=True) == ([hydra], None)
    assert mpi_launch.choose([ompi, hydra], OPEN_MPI_LIBRARY, root=True) == \
        ([ompi, "--oversubscribe", "--allow-run-as-root"], None)
    assert mpi_launch.choose([hydra, ompi], OPEN_MPI_LIBRARY, root=False) == \
        ([ompi, "--oversubscribe"], None)


def test_open_mpi_as_root_starts_with_the_chosen_command(tmp_path):
    """The fake refuses root as Open MPI does; the chosen command gets past it."""
    ompi = fake_mpiexec(tmp_path / "ompi", OPEN_MPI_5)
    prefix, why = mpi_launch.choose([ompi], OPEN_MPI_LIBRARY, root=ROOT)
    assert why is None
    proc = subprocess.run([*prefix, "-n", "2", "true"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    if ROOT:
        assert "--allow-run-as-root" in proc.stdout.split()
        plain = subprocess.run([ompi, "-n", "2", "true"], capture_output=True, text=True)
        assert plain.returncode == 1 and "attempt to run as root" in plain.stderr


def test_without_an_mpiexec_of_that_library_it_says_which_it_found(tmp_path):
    ompi = fake_mpiexec(tmp_path / "ompi", OPEN_MPI_4)
    broken = fake_mpiexec(tmp_path / "broken", "", status=1)
    assert mpi_launch.choose([ompi, broken], MPICH_LIBRARY, root=True) == (
        None, f"mpi4py loads MPICH's MPI library, but {ompi} is Open MPI's and "
              f"{broken} is neither Open MPI's nor MPICH's")
    assert mpi_launch.choose([], MPICH_LIBRARY, root=True) == \
        (None, "no mpiexec next to python or on PATH")
    assert mpi_launch.choose([ompi], "Some MPI 1.0\n", root=True) == \
        (None, "mpi4py's MPI library is neither Open MPI nor MPICH (Some MPI 1.0)")
    assert mpi_launch.choose([tmp_path / "missing"], MPICH_LIBRARY, root=True)[0] is None


def test_the_candidates_are_beside_python_then_on_path(tmp_path, monkeypatch):
    beside = fake_mpiexec(tmp_path / "venv" / "bin", HYDRA)
    other = fake_mpiexec(tmp_path / "usr" / "bin", OPEN_MPI_4)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "venv" / "bin" / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "usr" / "bin"))
    assert mpi_launch.candidates() == [beside, other]
    monkeypatch.setenv("PATH", f"{tmp_path / 'venv' / 'bin'}:{tmp_path / 'usr' / 'bin'}")
    assert mpi_launch.candidates() == [beside]
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    assert mpi_launch.candidates() == [beside]


def test_the_command_line_says_why_not_and_refuses(monkeypatch, capsys):
    monkeypatch.setattr(mpi_launch, "launcher", lambda: (None, "mpi4py not installed"))
    assert mpi_launch.main(["--why-not"]) == 0
    assert capsys.readouterr().out == "mpi4py not installed\n"
    assert mpi_launch.main(["2", "true"]) == 2
    assert capsys.readouterr().err == "mpi_launch: mpi4py not installed\n"
    with pytest.raises(RuntimeError, match="cannot start MPI ranks: mpi4py not installed"):
        mpi_launch.command(2, ["true"])
    monkeypatch.setattr(mpi_launch, "launcher", lambda: (["/bin/mpiexec"], None))
    assert mpi_launch.main(["--why-not"]) == 0
    assert capsys.readouterr().out == "\n"
    assert mpi_launch.main(["two", "true"]) == 2
    assert "RANKS COMMAND" in capsys.readouterr().err


def test_two_real_ranks_see_each_other():
    """This machine's MPI (the mpich wheel's in a venv of scripts/setup.sh)."""
    prefix, why = mpi_launch.launcher()
    if why:
        pytest.skip(why)
    assert mpi_launch.implementation(mpi_launch.version_text(prefix[0])) is not None
    assert mpi_launch.main(["--why-not"]) == 0
    # rank 0 alone prints (the ranks' output may interleave)
    script = ("from mpi4py import MPI; c = MPI.COMM_WORLD; ranks = c.gather(c.Get_rank())\n"
              "if ranks: print(ranks, c.Get_size())")
    proc = subprocess.run([sys.executable, "-P", LAUNCH, "2", sys.executable, "-P", "-c", script],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "[0, 1] 2" in proc.stdout.splitlines(), proc.stdout
    shown = proc.stderr.removeprefix("mpi_launch: ").split()   # the command it became
    assert os.path.samefile(shown[0], prefix[0]) and shown[1:len(prefix) + 2] == \
        [*prefix[1:], "-n", "2"], proc.stderr
