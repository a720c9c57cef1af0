"""Every ```python block of README.md and docs/*.md runs, so the examples
cannot drift from the code.

The convention (docs/internals/testing.md, "Examples in the documentation"): the
blocks of one page run in order, in one namespace of their own, on each
execution target (the CPU target everywhere, the GPU where there is one),
from a scratch directory with a scratch kernel cache.  Each block runs as
the code of the page's file at the block's own lines, so a traceback (and a
compile error's caret) points into the page.  An HTML comment on the line
before a block, which neither GitHub nor the documentation site shows,
changes what is done with it:

    <!-- example: raises ValueError -->    the block must raise it (a builtin
                                           or gpujit exception), at its end
    <!-- example: skip, REASON -->         the block is not run (a fragment,
                                           or what a test machine cannot do)

A skip states its reason, and this file keeps their number small.
"""
import builtins
import glob
import os
import re
import warnings

import pytest

import gpujit
from conftest import ROOT

PAGES = [os.path.join(ROOT, "README.md")] + sorted(
    glob.glob(os.path.join(ROOT, "docs", "*.md"))
    + glob.glob(os.path.join(ROOT, "docs", "internals", "*.md")))
MOST_SKIPS = 3   # in all pages; raise it only for a block no test machine can run

FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                   re.M | re.S)
MARK = re.compile(r"<!--\s*example:\s*(?P<what>raises|skip)\b[ ,]*(?P<arg>.*?)\s*-->\s*$")


class Block:
    def __init__(self, path, line, code, mark, arg):
        self.path, self.line, self.code, self.mark, self.arg = path, line, code, mark, arg

    def __repr__(self):
        return f"{os.path.relpath(self.path, ROOT)}:{self.line}"


def python_blocks(path):
    """The page's ```python blocks, each with its first line's number and the
    example: mark of the line before its fence (None when there is none)."""
    with open(path) as f:
        text = f.read()
    blocks = []
    for m in FENCE.finditer(text):
        if m.group("info").strip() != "python":
            continue
        fence_line = text.count("\n", 0, m.start()) + 1
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.search(before)
        indent = m.group("indent")
        code = "".join(line[len(indent):] if line.startswith(indent) else line
                       for line in m.group("body").splitlines(True))
        blocks.append(Block(path, fence_line + 1, code, mark and mark.group("what"),
                            mark and mark.group("arg")))
    return blocks


def exception_named(name):
    exc = getattr(builtins, name, None) or getattr(gpujit, name, None)
    assert isinstance(exc, type) and issubclass(exc, BaseException), \
        f"'<!-- example: raises {name} -->' names no builtin or gpujit exception"
    return exc


def run_block(block, namespace):
    # the page's own line numbers: tracebacks and compile errors point into it
    code = compile("\n" * (block.line - 1) + block.code, block.path, "exec")
    if block.mark == "raises":
        with pytest.raises(exception_named(block.arg)):
            exec(code, namespace)
    else:
        exec(code, namespace)


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A scratch directory and kernel cache, and warnings as the examples expect."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GPUJIT_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("GPUJIT_CACHE", "GPUJIT_CONTRACT", "GPUJIT_WARN_ON_IMPLICIT_COPY"):
        monkeypatch.delenv(name, raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gpujit.GpujitPerformanceWarning)
        yield tmp_path


@pytest.mark.usefixtures("scratch")
@pytest.mark.parametrize("page", PAGES, ids=lambda p: os.path.relpath(p, ROOT))
def test_the_examples_of_a_page_run(page, target):
    namespace = {"__name__": "__main__", "__file__": page}
    try:
        for block in python_blocks(page):
            if block.mark != "skip":
                run_block(block, namespace)
    finally:
        gpujit.set_target(target)   # an example may switch it


def test_skips_are_few_and_give_their_reasons():
    skips = [b for page in PAGES for b in python_blocks(page) if b.mark == "skip"]
    assert all(b.arg for b in skips), [b for b in skips if not b.arg]
    assert len(skips) <= MOST_SKIPS, skips


def test_every_page_with_python_has_its_blocks_found():
    """The fence pattern finds every ```python block (an unmatched one would
    silently not run)."""
    for page in PAGES:
        with open(page) as f:
            opening = len(re.findall(r"^[ \t]*```python[ \t]*$", f.read(), re.M))
        assert len(python_blocks(page)) == opening, page


def test_a_mark_names_what_it_does():
    """A misspelt mark would silently run its block as any other."""
    for page in PAGES:
        with open(page) as f:
            for line in f:
                if line.lstrip().startswith("<!--") and "example" in line:
                    assert MARK.search(line), f"{page}: unknown mark {line.strip()!r}"
