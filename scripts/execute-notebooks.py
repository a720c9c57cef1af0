"""Executes the example notebooks from scratch and writes them, with their
outputs, into a folder: how the committed outputs of examples/notebooks/ are
made (on the GPU machine, by scripts/gpu-test.sh, at the notebooks' full
sizes).  Needs nbclient, nbformat and ipykernel.

    python3 -P scripts/execute-notebooks.py OUTDIR [NOTEBOOK...]

The target is the one gpujit picks (GPUJIT_TARGET chooses).  Exits non-zero
if a cell fails that is not tagged "raises-exception"."""
import glob
import os
import sys
import tempfile

import nbclient
import nbformat

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv):
    if not argv:
        sys.exit(__doc__)
    outdir = argv[0]
    paths = argv[1:] or sorted(glob.glob(os.path.join(ROOT, "examples", "notebooks", "*.ipynb")))
    os.makedirs(outdir, exist_ok=True)
    failed = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        # the kernel's working folder is outside the repository, whose
        # ./gpujit/ would shadow the built one
        with tempfile.TemporaryDirectory() as cwd:
            client = nbclient.NotebookClient(nb, timeout=1200, kernel_name="python3",
                                             resources={"metadata": {"path": cwd}})
            try:
                client.execute()
            except nbclient.exceptions.CellExecutionError as error:
                failed.append(os.path.basename(path))
                print(f"{os.path.basename(path)}: {error}", file=sys.stderr)
        nbformat.write(nb, os.path.join(outdir, os.path.basename(path)))
        print(f"executed {os.path.basename(path)}")
    if failed:
        sys.exit(f"execute-notebooks: cells failed in {', '.join(failed)}")


if __name__ == "__main__":
    main(sys.argv[1:])
