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
    for name in ["api", "fusion", "h5_examples", "tests"]:
        (r / name).symlink_to(REPO / name)
    b = r / "build"
    b.mkdir()
    for name in ["bin", "plugin", "api", "fusion", "planner"]:
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

