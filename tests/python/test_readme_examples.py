"""The README's commands, run as a user runs them: the blocks marked
`<!-- tested by tests/python/test_readme_examples.py: NAME -->` are copied
out of README.md and run by bash, word for word, from a folder laid out as
the repository root after the build (the sources are the repository's;
build/ holds the build's programs, plugin and libraries, so what the
commands write stays in a temporary folder). Also: the walkthrough keeps
its files with H5FZ_WORK_DIR and prints a plot command that works; a CMake
project using h5fz by add_subdirectory builds and runs; the README's test
command is the one CI runs."""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

import h5fz_testlib as lib

REPO = lib.REPO
BUILD = pathlib.Path(os.environ["H5FZ_BUILD_DIR"])
README = REPO / "README.md"
PNG = b"\x89PNG\r\n\x1a\n"


def readme_block(name):
    m = re.search(r"<!-- tested by tests/python/test_readme_examples\.py: %s -->\n```\w*\n(.*?)```"
                  % re.escape(name), README.read_text(), re.S)
    assert m, "README.md has no block marked %r" % name
    return m.group(1)


def user_env():
    """The environment of a user's shell: no HDF5_PLUGIN_PATH (the README's
    commands set it where they need it)."""
    env = dict(os.environ)
    env.pop("HDF5_PLUGIN_PATH", None)
    return env


@pytest.fixture
def root(tmp_path):
    """The repository root as a user has it after the build."""
    r = tmp_path / "repo"
    r.mkdir()
    for name in ["api", "fusion", "errors", "h5_examples", "tests"]:
        (r / name).symlink_to(REPO / name)
    b = r / "build"
    b.mkdir()
    for name in ["bin", "plugin", "api", "fusion", "device_ops", "planner", "errors"]:
        (b / name).symlink_to(BUILD / name)
    return r


def run_block(root, text, timeout=600):
    p = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=root, env=user_env(),
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, "README block failed (%d):\n%s\n%s%s" % (p.returncode, text,
                                                                        p.stdout, p.stderr)
    return p


def made_files(root):
    """Files the commands created outside build/ (symlinks are the tree's)."""
    return sorted(str(p.relative_to(root)) for p in root.iterdir()
                  if not p.is_symlink() and p.name != "build")


@pytest.mark.skipif(shutil.which("h5repack") is None, reason="h5repack not installed")
def test_plot_error_command(root):
    """The plot_error.py command works as written: the block makes the two
    files it reads (they used to be named but never made)."""
    p = run_block(root, readme_block("plot_error"))
    assert "max error:" in p.stdout and "wrote build/plot.png" in p.stdout, p.stdout
    assert (root / "build" / "plot.png").read_bytes()[:8] == PNG
    assert (root / "build" / "orig.h5").is_file() and (root / "build" / "comp.h5").is_file()
    assert made_files(root) == []
    # Run again: it still works (from-raw --force, h5repack overwrites).
    run_block(root, readme_block("plot_error"))


@pytest.mark.skipif(not (BUILD / "bin" / "heat3d").is_file(), reason="heat3d not built")
def test_heat3d_command(root):
    """heat3d as the README runs it writes into build/, not the repository
    root; inspect shows the dataset API's attributes."""
    p = run_block(root, readme_block("heat3d"))
    assert "heat3d: OK" in p.stdout and "h5fz_spec" in p.stdout, p.stdout
    assert "(= the stored chunks)" in p.stdout and "stale" not in p.stdout
    assert (root / "build" / "heat3d.h5").is_file()
    assert made_files(root) == []


@pytest.mark.skipif(not (shutil.which("gcc") and shutil.which("pkg-config")),
                    reason="gcc or pkg-config not installed")
def test_gcc_command_builds_against_the_build_tree(root):
    """The README's gcc line links a program (heat3d.c as app.c) against the
    build tree's libraries, and it runs with the plugin on
    HDF5_PLUGIN_PATH."""
    shutil.copy(REPO / "h5_examples" / "heat3d.c", root / "app.c")
    p = run_block(root, readme_block("gcc"))
    assert "heat3d: OK" in p.stdout, p.stdout
    # Without the plugin, creating the dataset cannot work: said clearly.
    q = subprocess.run(["./app", "x.h5"], cwd=root, env=user_env(), capture_output=True,
                       text=True)
    assert q.returncode != 0 and "HDF5_PLUGIN_PATH" in q.stderr, q.stdout + q.stderr


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")
def test_cmake_add_subdirectory(tmp_path):
    """h5_examples/use_from_cmake: h5fz as a subdirectory of another CMake
    project, the program linking only the target h5fz_dataset."""
    b = tmp_path / "build-app"
    src = REPO / "h5_examples" / "use_from_cmake"
    for cmd in (["cmake", "-S", src, "-B", b],
                ["cmake", "--build", b, "-j", "2"]):
        p = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, timeout=900)
        assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    env = dict(os.environ, HDF5_PLUGIN_PATH=str(b / "plugin"))
    p = subprocess.run([str(b / "app"), str(tmp_path / "out.h5")], env=env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0 and "heat3d: OK" in p.stdout, p.stdout + p.stderr
    # The block the README shows is the one in that project.
    text = README.read_text()
    for line in ["add_subdirectory(path/to/h5fz h5fz EXCLUDE_FROM_ALL)",
                 "target_link_libraries(app PRIVATE h5fz_dataset)",
                 "add_dependencies(app h5fz_plugin)"]:
        assert line in text, line
        assert line.split("(")[0] + "(" in (src / "CMakeLists.txt").read_text()


@pytest.mark.skipif(shutil.which("h5repack") is None, reason="h5repack not installed")
def test_walkthrough_keeps_its_files_and_prints_a_working_plot_command(tmp_path):
    work = tmp_path / "walk"
    env = dict(os.environ, H5FZ_WORK_DIR=str(work))
    p = subprocess.run([str(REPO / "h5_examples" / "walkthrough.sh")], env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines[-2] == ("walkthrough: OK (files kept in %s: original.h5 abs.h5 pw_rel.h5 "
                         "lossless.h5)" % work), lines[-2:]
    for name in ["original.h5", "abs.h5", "pw_rel.h5", "lossless.h5"]:
        assert (work / name).is_file(), name
    assert lines[-1].startswith("next: ")
    q = subprocess.run(["bash", "-c", lines[-1][len("next: "):]], env=user_env(),
                       capture_output=True, text=True, timeout=600)
    assert q.returncode == 0, q.stdout + q.stderr
    assert (work / "plot.png").read_bytes()[:8] == PNG


@pytest.mark.skipif(shutil.which("h5repack") is None, reason="h5repack not installed")
def test_walkthrough_names_no_removed_folder(tmp_path):
    env = dict(os.environ)
    env.pop("H5FZ_WORK_DIR", None)
    env["TMPDIR"] = str(tmp_path)  # its mktemp folder, to see that it is gone
    p = subprocess.run([str(REPO / "h5_examples" / "walkthrough.sh")], env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr
    last = p.stdout.strip().splitlines()[-1]
    assert last == ("walkthrough: OK (the files were in a temporary folder, removed on exit; "
                    "set H5FZ_WORK_DIR=DIR to keep them)"), last
    assert list(tmp_path.iterdir()) == []


# What pip prints when it cannot reach the package index (scikit-build-core
# comes from there): the install test then skips, saying so.
PIP_OFFLINE = ("Could not find a version that satisfies the requirement scikit-build-core",
               "NewConnectionError", "Temporary failure in name resolution", "Network is unreachable",
               "No matching distribution found for scikit-build-core")


@pytest.mark.skipif(not pathlib.Path("/usr/bin/python3").is_file(), reason="no /usr/bin/python3")
def test_python_install_commands_work_as_written(tmp_path):
    """The README's Python install, word for word, from the clone, with a
    fresh home folder: a venv that sees Debian's h5py and numpy, pip
    install of the package into it (Debian's pip refuses outside a venv:
    externally-managed-environment), and the import registering the
    filter. Then the README's h5py example runs in that venv."""
    home = tmp_path / "home"
    home.mkdir()
    env = dict(user_env(), HOME=str(home), PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    env["PATH"] = "/usr/bin:/bin"  # the system python3, as on a fresh Debian machine
    p = subprocess.run(["bash", "-euo", "pipefail", "-c", readme_block("python_install")], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=1500)
    out = p.stdout + p.stderr
    if p.returncode != 0 and any(e in out for e in PIP_OFFLINE):
        pytest.skip("pip cannot reach the package index for scikit-build-core: " + out[-500:])
    assert p.returncode == 0, out[-6000:]
    assert p.stdout.strip().splitlines()[-1] == "True", out[-3000:]
    py = home / ".venvs" / "h5fz" / "bin" / "python"
    with open(REPO / "README.md") as f:
        m = re.search(r"<!-- tested by tests/package/test_h5fz_package\.py: python_example -->\n```python\n(.*?)```",
                      f.read(), re.S)
    code = "import numpy as np\na = np.linspace(0, 1, 2 * 16 * 256 * 256, dtype='f4').reshape(32, 256, 256)\n" + \
        m.group(1) + "f = h5py.File('out.h5', 'r')\nassert abs(f['t'][...] - a).max() <= 1e-3\n" \
        "assert f['t'].id.get_storage_size() < a.nbytes / 2\nprint('readme python ok')\n"
    q = subprocess.run([str(py), "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert q.returncode == 0 and "readme python ok" in q.stdout, q.stdout + q.stderr


def test_readme_test_command_is_the_ci_command():
    """README's test command is exactly the one .ci/run runs; running
    tests in parallel (ctest -j) is explained next to it, not added to it."""
    text = README.read_text()
    m = re.search(r"2\. Run the whole test suite:\n\n```sh\n(.*?)\n```", text, re.S)
    assert m, "README: no test command block"
    readme_cmd = m.group(1).strip()
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    i = next(k for k, l in enumerate(ci) if l.startswith("# The README's test command"))
    assert ci[i + 1].strip() == readme_cmd == "ctest --test-dir build --output-on-failure"
    after = text[m.end():m.end() + 1500]
    assert "ctest -j" in after and "-j$(nproc)" in after


def test_example_outputs_by_default_are_ignored():
    """Run from the repository root without an output name, heat3d and
    plot_error.py write heat3d.h5 and plot.png there: git ignores them."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    p = subprocess.run(["git", "-C", str(REPO), "check-ignore", "heat3d.h5", "plot.png"],
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.split() == ["heat3d.h5", "plot.png"], p.stdout
