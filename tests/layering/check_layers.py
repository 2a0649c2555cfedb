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
BELOW_HDF5 = ("fusion", "planner", "device_ops", "errors")  # no HDF5 below filter/api/cli
LIB_LAYERS = ("api", "filter", "cli", "bench", "planner", "device_ops", "h5_examples", "python", "errors")
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


# The names an op's code has (device_ops/: op_X.h the reference, op_X_cpu.c
# the CPU fast form): the executors in fusion/cpu/ call them, never define them.
OP_FUNCTION = re.compile(r"h5fz_(fast_)?(quant|delta|lorenzo|lnd|zigzag|negabinary|bitshuffle|rze|bitpack)_\w*")


def check_sources(root, broken):
    dlopen_cuda = []
    all_sources = list(sources(root))
    fusion_files = {os.path.basename(rel) for rel, _ in all_sources if layer(rel) == "fusion"}
    for rel, text in all_sources:
        code = strip_comments(text)
        incs = INCLUDE.findall(code)
        top = layer(rel)
        if rel.startswith(os.path.join("fusion", "cpu") + os.sep):
            for name, line, _ in function_lengths(text):
                if OP_FUNCTION.fullmatch(name) or os.path.basename(rel).startswith("op_"):
                    broken.append(f"{rel}:{line}: defines the op function {name}; op code lives in device_ops/")
        for inc in incs:
            base = os.path.basename(inc)
            if top == "device_ops" and ("fusion/" in inc or base in fusion_files):
                broken.append(f"{rel}: includes {inc} of fusion/; device_ops/ (the ops) includes nothing above it")
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


# One error style (docs/design.md "Errors"): an h5fz_status and the thread's
# message of errors/. The planner's own codes (H5FZ_PLAN_OK, H5FZ_PLAN_ERR_*,
# h5fz_planner_status) are gone; their names live on only as aliases in
# planner/h5fz_planner.h for the fusion/gpu/ files below, which another
# re-cut changes at the same time. A file may leave this list, never join it.
OLD_PLAN_CODES = re.compile(r"\bH5FZ_PLAN_(?:OK|ERR_[A-Z_]+)\b|\bh5fz_planner_status\b")
OLD_PLAN_CODES_ALLOWED = set()  # none left: every library layer speaks h5fz_status
# A thread's message is kept in errors/ only; the Python binding keeps a
# copy of its own because a Python callback may run the codec (and
# overwrite h5fz_last_error) before Python reads the message.
THREAD_MESSAGE = re.compile(r"\b(?:_Thread_local|__thread|thread_local)\b[^;]*\bchar\b[^;]*\[")
THREAD_MESSAGE_ALLOWED = {
    os.path.join("errors", "h5fz_status.c"),
    os.path.join("python", "src", "h5fz_py.c"),
}


def check_error_style(root, broken):
    for rel, text in sources(root):
        code = strip_comments(text)
        if rel not in OLD_PLAN_CODES_ALLOWED:
            for m in sorted(set(OLD_PLAN_CODES.findall(code))):
                broken.append("%s: uses the planner's old status %s; return an h5fz_status "
                              "(errors/h5fz_status.h) with h5fz_fail's message instead" % (rel, m))
        if rel not in THREAD_MESSAGE_ALLOWED and THREAD_MESSAGE.search(code):
            broken.append("%s: keeps a thread-local message of its own; report through h5fz_fail "
                          "(errors/h5fz_fail.h) so h5fz_last_error() has it" % rel)
        if layer(rel) == "errors":
            for inc in INCLUDE.findall(code):
                if inc.endswith(".h") and not inc.startswith("h5fz_status") and not inc.startswith("h5fz_fail") \
                        and "/" not in inc and inc.startswith("h5fz"):
                    broken.append("%s: includes %s; errors/ is the bottom layer and includes nothing of h5fz" % (rel, inc))


def strongly_connected(graph):
    """The strongly connected components of graph (node -> set of nodes)
    with more than one node: the circles (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def fusion_stem(rel):
    """fusion/gpu/h5fz_jit.c and fusion/gpu/h5fz_jit.h are one node: h5fz_jit."""
    return os.path.splitext(os.path.basename(rel))[0]


def check_include_circles(root, broken):
    """No include circle among fusion/'s files: a file's .c and .h are one
    node, and X -> Y when X.c or X.h includes Y.h (of fusion/)."""
    files = {rel: text for rel, text in sources(root) if layer(rel) == "fusion"}
    stems = {fusion_stem(rel) for rel in files}
    graph = {}
    for rel, text in files.items():
        me = fusion_stem(rel)
        for inc in INCLUDE.findall(strip_comments(text)):
            other = os.path.splitext(os.path.basename(inc))[0]
            if inc.endswith(".h") and other in stems and other != me and "device_ops" not in inc:
                graph.setdefault(me, set()).add(other)
        graph.setdefault(me, set())
    for comp in strongly_connected(graph):
        broken.append("include circle among fusion/ files: " + " <-> ".join(comp))


MAX_FUNCTION_LINES = 100
MAX_FILE_LINES = 600


def strip_literals(text):
    """Comments, string and character literals blanked (braces in them do not count)."""
    text = strip_comments(text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\\n])+'", "''", text)


def function_lengths(text):
    """(name, first line, lines) of each top-level function body: a '{' in
    column 0 after its signature, to the matching '}'."""
    lines = strip_literals(text).split("\n")
    out, start, depth, name = [], None, 0, "?"
    for i, line in enumerate(lines):
        if start is None:
            if line.startswith("{") and i > 0:
                j, sig = i - 1, ""
                while j >= 0 and lines[j].strip() and not lines[j].rstrip().endswith((";", "}")):
                    sig = lines[j] + " " + sig
                    j -= 1
                names = re.findall(r"(\w+)\s*\(", sig)
                name = names[0] if names else "?"
                start, depth = i, line.count("{") - line.count("}")
                if depth == 0:
                    start = None
        else:
            depth += line.count("{") - line.count("}")
            if depth <= 0:
                out.append((name, start + 1, i - start + 1))
                start = None
    return out


def check_sizes(root, broken):
    """Short files with one job: no .c file of fusion/ over MAX_FILE_LINES
    lines, no function in fusion/ over MAX_FUNCTION_LINES."""
    for rel, text in sources(root):
        if layer(rel) != "fusion" or not rel.endswith(".c"):
            continue
        n = text.count("\n")
        if n > MAX_FILE_LINES:
            broken.append("%s: %d lines, more than %d" % (rel, n, MAX_FILE_LINES))
        for name, line, length in function_lengths(text):
            if length > MAX_FUNCTION_LINES:
                broken.append("%s:%d: %s is %d lines, more than %d" % (rel, line, name, length, MAX_FUNCTION_LINES))


def check_call_circles(lib, broken):
    """No call circle among the objects of the core library: X -> Y when X
    uses a symbol Y defines (nm)."""
    out = subprocess.run(["nm", "-A", lib], capture_output=True, text=True, check=True).stdout
    defs, uses = {}, {}
    for line in out.splitlines():
        head, _, rest = line.rpartition(":")
        parts = rest.split()
        if len(parts) < 2:
            continue
        obj = os.path.basename(head.split(":")[-1]).replace(".c.o", "").replace(".o", "")
        kind, sym = parts[-2], parts[-1]
        if kind == "U":
            uses.setdefault(obj, set()).add(sym)
        elif kind in "TDBRCGSVW":
            defs[sym] = obj
    graph = {}
    for obj, syms in uses.items():
        graph[obj] = {defs[s] for s in syms if s in defs and defs[s] != obj}
    for comp in strongly_connected(graph):
        broken.append("call circle among %s's objects: %s" % (os.path.basename(lib), " <-> ".join(comp)))


RESULTS = os.path.join("bench", "suite", "results")


def check_results_are_data(root, broken):
    """bench/ holds code, its results hold data: no script under
    bench/suite/results (a device call's record is a plan, JSON, that
    bench/suite/device_call.py runs)."""
    top = os.path.join(root, RESULTS)
    for folder, _, files in os.walk(top):
        for f in sorted(files):
            path = os.path.join(folder, f)
            with open(path, "rb") as fh:
                starts_as_script = fh.read(2) == b"#!"
            if f.endswith((".sh", ".bash", ".py")) or starts_as_script:
                broken.append("%s: a script under %s; keep the record as data (a plan for "
                              "bench/suite/device_call.py, logs, JSON)" % (os.path.relpath(path, root), RESULTS))


# ---- configuration: the H5FZ_* variables are read in one place ------------
# fusion/h5fz_settings.c reads them (docs/design.md "Layers"), for the C
# sources of every layer, python/'s C library too (its .py files hand the
# C library handles' options, h5fz.Options, and read no H5FZ_* variable of
# the codec's). Variables kept where they are, each with its reason, by
# (layer, variable), so a file split moves nothing here; an entry may leave
# this list, never join it: the planner sits below fusion/ and cannot ask
# its settings; the CLI's chunk walk is a knob of the CLI alone.
GETENV_SETTINGS_FILE = os.path.join("fusion", "h5fz_settings.c")
GETENV_KEPT = set()  # none: the planner is handed H5FZ_REGISTRY / H5FZ_CACHE_DIR, the CLI reads H5FZ_CHUNK_WALK through the settings
GETENV_LAYERS = ("fusion", "filter", "api", "cli", "planner", "device_ops", "errors", "python")
GETENV = re.compile(r'\b(?:secure_)?getenv\s*\(\s*("H5FZ_\w*"|[A-Za-z_]\w*)')


def check_getenv(root, broken):
    for rel, text in sources(root):
        if layer(rel) not in GETENV_LAYERS or rel == GETENV_SETTINGS_FILE:
            continue
        for m in GETENV.finditer(strip_comments(text)):
            arg = m.group(1)
            if arg.startswith('"') and (layer(rel), arg.strip('"')) in GETENV_KEPT:
                continue
            if arg.startswith('"') or arg in ("name", "var", "variable"):
                if not arg.startswith('"') or arg.startswith('"H5FZ_'):
                    broken.append("%s: getenv(%s): the H5FZ_* variables are read in %s only (h5fz_settings_* "
                                  "gives them)" % (rel, arg, GETENV_SETTINGS_FILE))


# ---- header tiers (docs/design.md "Header tiers") --------------------------
TIER_LAYERS = ("filter", "api", "cli", "python")  # the layers on fusion/ whose includes are checked
DESIGN = os.path.join("docs", "design.md")
PACKAGE = os.path.join("package", "CMakeLists.txt")


def header_tiers(root, broken):
    """{header path: (tier, set of folders it is included by)} from the
    table of docs/design.md's "Header tiers" section."""
    with open(os.path.join(root, DESIGN), encoding="utf-8") as fh:
        text = fh.read()
    m = re.search(r"^### Header tiers\n(.*?)(?=^#)", text, re.S | re.M)
    if not m:
        broken.append("%s: no '### Header tiers' section" % DESIGN)
        return {}
    tiers = {}
    for row in re.finditer(r"^\| `([^`]+)` \| (public|shared) \| ([^|]*)\|", m.group(1), re.M):
        users = set(re.findall(r"`([a-z_]+)/`", row.group(3)))
        tiers[row.group(1)] = (row.group(2), users)
    if not tiers:
        broken.append("%s: the 'Header tiers' table names no header" % DESIGN)
    return tiers


def installed_headers(root):
    with open(os.path.join(root, PACKAGE), encoding="utf-8") as fh:
        text = fh.read()
    found = set()
    for m in re.finditer(r"set\(h5fz_public_\w+_header([^)]*)\)", text):
        found.update(re.findall(r"\$\{PROJECT_SOURCE_DIR\}/(\S+\.h)", m.group(1)))
    return found


def check_header_tiers(root, broken):
    """Public headers are the installed ones; a header of another folder is
    included by filter/, api/, cli/ and python/ only when it is public or
    shared, and a shared header's 'included by' column says who does."""
    tiers = header_tiers(root, broken)
    public = {h for h, (t, _) in tiers.items() if t == "public"}
    installed = installed_headers(root)
    for h in sorted(public - installed):
        broken.append("%s names %s public (installed), but %s does not install it" % (DESIGN, h, PACKAGE))
    for h in sorted(installed - public):
        broken.append("%s installs %s, which %s does not name public" % (PACKAGE, h, DESIGN))
    all_sources = list(sources(root))
    by_name = {}
    for rel, _ in all_sources:
        if rel.endswith(".h") and layer(rel) not in ("tests", "bench", "h5_examples"):
            by_name.setdefault(os.path.basename(rel), []).append(rel)
    for h in sorted(tiers):
        if not os.path.isfile(os.path.join(root, h)):
            broken.append("%s names the header %s, which does not exist" % (DESIGN, h))
    seen = {}
    for rel, text in all_sources:
        top = layer(rel)
        if top not in TIER_LAYERS:
            continue
        for inc in INCLUDE.findall(strip_comments(text)):
            for target in by_name.get(os.path.basename(inc), []):
                if layer(target) == top or layer(target) == "errors":
                    continue
                tier, users = tiers.get(target, ("private", set()))
                if tier == "private":
                    broken.append("%s: includes %s, private to %s/ (docs/design.md, 'Header tiers')"
                                  % (rel, target, os.path.dirname(target)))
                elif tier == "shared":
                    seen.setdefault(target, set()).add(top)
                    if top not in users:
                        broken.append("%s: includes the shared %s, whose row in %s does not name %s/"
                                      % (rel, target, DESIGN, top))
    for h, (tier, users) in sorted(tiers.items()):
        for u in sorted(users & set(TIER_LAYERS) - seen.get(h, set())) if tier == "shared" else ():
            broken.append("%s: the row of %s names %s/, which does not include it" % (DESIGN, h, u))
    return tiers


# ---- the mode table: mode names in one table ---------------------------------
MODE_TABLE = os.path.join("fusion", "format", "h5fz_modes.c")
MODE_ROW = re.compile(r'\{\s*H5FZ_MODE_\w+\s*,\s*"([^"]+)"\s*,\s*"([^"]+)"')
MODE_LAYERS = ("fusion", "filter", "api", "cli", "python", "planner", "device_ops", "errors")
STRING = re.compile(r'"((?:\\.|[^"\\\n])*)"' + r"|'((?:\\.|[^'\\\n])*)'")
# the fast forms and the checks ask the table (H5FZ_QMODE_FAST, a row), not
# the order of the numbers
MODE_ORDER = re.compile(r"(?<![-<>])[<>]=?\s*(?:\(\s*\w+\s*\)\s*)?H5FZ_Q?MODE_\w+|H5FZ_Q?MODE_\w+\s*[<>](?![<>])")


def mode_words(root, broken):
    with open(os.path.join(root, MODE_TABLE), encoding="utf-8") as fh:
        rows = MODE_ROW.findall(strip_comments(fh.read()))
    if len(rows) < 4:
        broken.append("%s: found %d mode rows, want abs, rel, pw_rel and lossless at least" % (MODE_TABLE, len(rows)))
    words = set()
    for name, label in rows:
        words.update({name, name.replace("_", "-"), label})
    return words


def check_mode_names(root, broken):
    words = mode_words(root, broken)
    for rel, text in sources_and_python(root):
        if layer(rel) not in MODE_LAYERS or rel == MODE_TABLE:
            continue
        code = strip_comments(text) if not rel.endswith(".py") else strip_python_comments(text)
        for m in STRING.finditer(code):
            lit = m.group(1) if m.group(1) is not None else m.group(2)
            if lit in words:
                broken.append("%s: spells the mode name \"%s\"; mode names live in %s (h5fz_mode_at, "
                              "h5fz_mode_name, h5fz.MODES)" % (rel, lit, MODE_TABLE))
        if rel.endswith(".py"):
            for m in re.finditer(r"\bdef\s+\w+\s*\(([^)]*)\)", code):
                for w in sorted(words):
                    if re.search(r"\b%s\s*=" % re.escape(w), m.group(1)):
                        broken.append("%s: a keyword named after the mode %s; take the modes of h5fz.MODES" % (rel, w))
        for m in MODE_ORDER.finditer(code):
            broken.append("%s: orders the modes by number (%s); ask the mode table's row or H5FZ_QMODE_FAST"
                          % (rel, m.group(0).strip()))


def strip_python_comments(text):
    """Docstrings and # comments blanked (prose may name modes)."""
    text = re.sub(r'"""(?:.|\n)*?"""', '""', text)
    return re.sub(r"#[^\n]*", "", text)


def sources_and_python(root):
    yield from sources(root)
    for top, dirs, files in os.walk(os.path.join(root, "python")):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not d.startswith("build")]
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(top, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    yield os.path.relpath(path, root), fh.read()


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    root = sys.argv[1]
    broken = []
    cuda = check_sources(root, broken)
    check_include_circles(root, broken)
    check_sizes(root, broken)
    check_error_style(root, broken)
    check_results_are_data(root, broken)
    check_getenv(root, broken)
    check_header_tiers(root, broken)
    check_mode_names(root, broken)
    if len(sys.argv) > 2:
        check_call_circles(sys.argv[2], broken)
    for b in broken:
        print("layering: " + b)
    if broken:
        return 1
    print("layering: ok (no HDF5 below filter/api/cli, h5fz_internal.h private to fusion/, "
          "device_ops/ includes nothing of fusion/, no op code in fusion/cpu/, "
          "bench/ free of tests/, libcuda opened by %s only, one error style (no H5FZ_PLAN_* codes, "
          "thread messages in errors/ only), H5FZ_* variables read in %s only%s, filter/api/cli/python "
          "include public or shared headers of other folders only (docs/design.md), mode names in %s only and "
          "no order of mode numbers, no include circle in fusion/, "
          "fusion/'s .c files <= %d lines and functions <= %d, no script under bench/suite/results%s)"
          % (cuda[0], GETENV_SETTINGS_FILE,
             " (kept: %s)" % ", ".join("%s in %s/" % (v, l) for l, v in sorted(GETENV_KEPT)) if GETENV_KEPT else "",
             MODE_TABLE, MAX_FILE_LINES, MAX_FUNCTION_LINES,
             ", no call circle in " + os.path.basename(sys.argv[2]) if len(sys.argv) > 2 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
