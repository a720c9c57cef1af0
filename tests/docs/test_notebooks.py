"""The example notebooks (examples/notebooks/) run from scratch, as a reader
runs them, on each target: nbclient executes every cell in a fresh kernel
with the sizes made small through the notebooks' one parameter
(GPUJIT_NOTEBOOK_N); a cell that fails fails the test, except cells tagged
"raises-exception", which show an error on purpose.  A kernel defined in a
cell reports its errors at the cell's line, with the caret under the code."""
import glob
import os
import re

import pytest

import gpujit
from conftest import ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "examples", "notebooks", "*.ipynb")))
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def execute(path, target, tmp_path, monkeypatch):
    if target == "cuda" and not gpujit.is_available():
        pytest.skip("no CUDA device available")
    monkeypatch.setenv("GPUJIT_TARGET", target)
    monkeypatch.setenv("GPUJIT_NOTEBOOK_N", "20000")
    monkeypatch.delenv("MPLBACKEND", raising=False)   # the kernel's inline backend: PNGs
    nb = nbformat.read(path, as_version=4)
    # cwd outside the repository: its root would shadow the installed gpujit
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    return nb


def outputs(cell):
    text = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            text.append(out.text)
        elif out.output_type == "error":
            text.append(ANSI.sub("", "\n".join(out.traceback)))
    return "".join(text)


def test_there_are_notebooks():
    names = {os.path.basename(p) for p in NOTEBOOKS}
    assert names >= {"getting_started.ipynb", "mandelbrot_and_heat.ipynb",
                     "shared_memory.ipynb", "memory.ipynb"}, names


@pytest.mark.parametrize("target", ["cpu", "cuda"])
@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_runs_from_scratch(path, target, tmp_path, monkeypatch):
    nb = execute(path, target, tmp_path, monkeypatch)
    text = "".join(outputs(c) for c in nb.cells if c.cell_type == "code")
    assert f"target: {target}" in text
    errors = re.findall(r"max error: (\S+)", text)
    assert errors and all(float(e) == 0.0 for e in errors), errors
    for cell in nb.cells:
        failed = any(o.output_type == "error" for o in cell.get("outputs", []))
        assert failed == ("raises-exception" in cell.metadata.get("tags", [])), cell.source
    if "plt." in "".join(c.source for c in nb.cells):   # its pictures are drawn
        assert any("image/png" in o.get("data", {}) for c in nb.cells
                   for o in c.get("outputs", []))


def test_an_error_in_a_notebook_cell_points_at_the_cells_line(tmp_path, monkeypatch):
    path = os.path.join(ROOT, "examples", "notebooks", "getting_started.ipynb")
    nb = execute(path, "cpu", tmp_path, monkeypatch)
    cell = next(c for c in nb.cells if "raises-exception" in c.metadata.get("tags", []))
    text = outputs(cell)
    assert "KernelReturnError" in text and "a kernel cannot return a value" in text
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if re.search(r"ipykernel.*\.py:4:5: ", line))
    assert lines[at + 1].strip() == "return x[i] + 1"
    assert lines[at + 2].strip().startswith("^~~")
