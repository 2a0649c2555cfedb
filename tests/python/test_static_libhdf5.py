"""A program with libhdf5 linked statically (Debian's h5cc links statically
unless given -shlib) exports no HDF5 symbols, so the plugin cannot bind to
it (docs/filter.md, "Self-binding"): H5Dcreate fails, and the plugin says
why once on stderr instead of leaving only HDF5's "error during user
callback". The same program linked with -shlib works."""
import os
import shutil
import subprocess

import pytest

import h5fz_testlib as lib

PROGRAM = r"""
#include <hdf5.h>
#include <stdio.h>
int main(int argc, char **argv)
{
  hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims[1] = {1000}, chunk[1] = {100};
  hid_t space = H5Screate_simple(1, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, chunk);
  H5Pset_filter(dcpl, %d, H5Z_FLAG_MANDATORY, 0, NULL);
  hid_t d = H5Dcreate2(f, "x", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  printf(d < 0 ? "create failed\n" : "created\n");
  return d < 0;
}
"""


@pytest.mark.skipif(shutil.which("h5cc") is None, reason="h5cc (Debian: libhdf5-dev) not found")
@pytest.mark.parametrize("link", ["static", "shlib"])
def test_program_with_static_libhdf5(tmp_path, link):
    src = tmp_path / "p.c"
    src.write_text(PROGRAM % lib.FILTER_ID)
    exe = tmp_path / "p"
    # in tmp_path: h5cc leaves its object file in the current folder
    subprocess.run(["h5cc", *(["-shlib"] if link == "shlib" else []), "-o", str(exe), str(src)], check=True, cwd=tmp_path,
                   capture_output=True)
    env = {k: v for k, v in os.environ.items() if k != "H5FZ_QUIET"}
    p = subprocess.run([str(exe), str(tmp_path / "o.h5")], capture_output=True, text=True, env=env)
    if link == "shlib":
        assert p.returncode == 0 and "created" in p.stdout, p.stdout + p.stderr
        assert "cannot find the HDF5 library" not in p.stderr
    else:
        assert p.returncode == 1 and "create failed" in p.stdout, p.stdout + p.stderr
        assert p.stderr.count("h5fz: the plugin cannot find the HDF5 library that loaded it") == 1, p.stderr
        assert "-shlib" in p.stderr
