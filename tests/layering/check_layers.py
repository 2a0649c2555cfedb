#!/usr/bin/env python3
"""The layering rules of h5fz that a script can check (docs/design.md,
"Layers"). Usage: check_layers.py SOURCE_DIR [LIBH5FZ_CORE.a]

Reads the tracked C sources as text (and, given the core library, its
symbol table through `nm`); prints every broken rule and exits 1, else
prints what it checked and exits 0.
"""
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.M)
# the library layers: a line's folder says what it may touch
BELOW_HDF5 = ("fusion", "planner", "device_ops")  # no HDF5 below filter/api/cli
LIB_LAYERS = ("api", "filter", "cli", "bench", "planner", "device_ops", "h5_examples")
SOURCE_EXT = (".c", ".h", ".cu", ".cuh")


def sources(root):
    """(relative path, text) of the C sources under root, build trees left out."""
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not d.startswith("build")]
        for f in sorted(files):
            if f.endswith(SOURCE_EXT):
                path = os.path.join(top, f)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    yield rel, fh.read()


def layer(rel):
    return rel.split(os.sep, 1)[0]


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def check_sources(root, broken):
    dlopen_cuda = []
    for rel, text in sources(root):
        code = strip_comments(text)
        incs = INCLUDE.findall(code)
        top = layer(rel)
        for inc in incs:
            base = os.path.basename(inc)
            if top in BELOW_HDF5 and (base == "hdf5.h" or re.match(r"H5[A-Za-z]*\.h$", base)):
                broken.append(f"{rel}: includes the HDF5 header {inc}; HDF5 stays in filter/, api/ and cli/")
            if top in LIB_LAYERS and base == "h5fz_internal.h":
                broken.append(f"{rel}: includes h5fz_internal.h, which is private to fusion/")
            if top == "bench" and ("tests/" in inc or inc.startswith("../tests")):
                broken.append(f"{rel}: includes {inc} from tests/; bench/ builds on the library alone")
        if re.search(r'dlopen\s*\(\s*"libcuda', code) or re.search(r'"libcuda\.so[^"]*"', code) and "dlopen" in code:
            dlopen_cuda.append(rel)
    if len(dlopen_cuda) != 1:
        broken.append("want exactly one file that dlopens libcuda (fusion's CUDA binding), found %d: %s"
                      % (len(dlopen_cuda), ", ".join(dlopen_cuda) or "none"))
    return dlopen_cuda


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    root = sys.argv[1]
    broken = []
    cuda = check_sources(root, broken)
    for b in broken:
        print("layering: " + b)
    if broken:
        return 1
    print("layering: ok (no HDF5 below filter/api/cli, h5fz_internal.h private to fusion/, "
          "bench/ free of tests/, libcuda opened by %s only)" % cuda[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
