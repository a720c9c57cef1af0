"""Sphinx configuration of gpujit's documentation site: the Markdown pages of
docs/ (through MyST), an API reference generated from the docstrings of the
installed gpujit, and the kernel API page generated from the compiler's
table of intrinsics.  Built by scripts/build-docs.sh, warnings as errors."""
import os

project = "gpujit"
author = "the gpujit developers"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
myst_heading_anchors = 4          # links to "page.md#a-heading" resolve
exclude_patterns = ["_build"]
html_theme = "alabaster"
napoleon_numpy_docstring = True
napoleon_google_docstring = False

GENERATED = "_generated"


def write_kernel_api(app):
    """_generated/kernel-api.md: every intrinsic kernels call (the compiler's
    table, gpujit._gpujit._intrinsics()) and every numba type object, each
    a py:function or py:data entry of its own."""
    import gpujit
    lines = ["# Kernel API", "",
             "What kernel code calls, from the compiler's own table (so this page lists "
             "exactly what compiles), and the type objects signatures are written with.", "",
             "## Functions and thread indices", ""]
    for name, kind, params, doc in gpujit._gpujit._intrinsics():
        head = f"py:function}} gpujit.{name}({params})" if kind == "function" \
            else f"py:data}} gpujit.{name}"
        lines += ["```{" + head, "", doc, "```", ""]
    namespaces = [n for n in gpujit.__all__ if isinstance(getattr(gpujit, n), gpujit._Namespace)]
    lines += ["## Namespaces", ""]
    for name in namespaces:
        members = sorted(r[0] for r in gpujit._gpujit._intrinsics() if r[0].startswith(name + "."))
        lines += ["```{py:data} gpujit." + name, "",
                  "The namespace of " + ", ".join(f"`{m}`" for m in members) + ".", "```", ""]
    lines += ["## Type objects", "",
              "numba's names for the scalar types, for signatures (`void(float32[:])`) "
              "and casts in kernels (`float32(x)`); `gpujit.types` has them all.", ""]
    for name in gpujit.__all__:
        obj = getattr(gpujit, name)
        if isinstance(obj, gpujit.types.Type):
            lines += ["```{py:data} gpujit." + name, "", f"The type `{obj!r}`.", "```", ""]
    os.makedirs(os.path.join(app.srcdir, GENERATED), exist_ok=True)
    with open(os.path.join(app.srcdir, GENERATED, "kernel-api.md"), "w") as f:
        f.write("\n".join(lines))


def setup(app):
    app.connect("builder-inited", write_kernel_api)
