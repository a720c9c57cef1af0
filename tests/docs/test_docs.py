"""The documentation site (scripts/build-docs.sh, Sphinx) builds with no
warning, and every public name of gpujit, and every attribute of a kernel,
has a reference entry of its own (the API page from the docstrings, the
kernel API page from the compiler's table of intrinsics).  The examples in
the pages run in test_doc_examples.py."""
import glob
import os
import re
import subprocess
import sys

import pytest

import gpujit
from conftest import ROOT

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")

pytestmark = pytest.mark.xdist_group("docs")   # one pytest-xdist worker: the site is built once


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(["bash", os.path.join(ROOT, "scripts", "build-docs.sh"), str(out)],
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, GJ_VENV=sys.prefix))   # this Python's venv
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    return out


def test_the_site_builds_without_warnings(site):
    for page in ("index", "api", "runtime", "language", "coming-from-numba"):
        assert (site / f"{page}.html").exists(), page


def entry_ids(site):
    ids = set()
    for path in glob.glob(str(site / "**" / "*.html"), recursive=True):
        with open(path) as f:
            ids |= set(re.findall(r'id="((?:module-)?gpujit\.[\w.]+)"', f.read()))
    return ids


def test_every_public_name_has_an_entry(site):
    ids = entry_ids(site)
    missing = [n for n in gpujit.__all__
               if f"gpujit.{n}" not in ids and f"module-gpujit.{n}" not in ids]
    assert not missing, missing


def test_every_attribute_of_a_kernel_has_an_entry(site):
    """The Dispatcher's methods, and what gpujit.jit adds to each kernel in
    Python (overloads, specialize, ...)."""
    kernel = gpujit.jit(lambda x: None)
    ids = entry_ids(site)
    missing = [n for n in dir(kernel)
               if not n.startswith("_") and f"gpujit.Dispatcher.{n}" not in ids]
    assert not missing, missing
