"""`h5fz cd-values` for Fortran: INTEGER is signed, so each word of 2^31 or
more is printed as the signed number with the same 32 bits, in a form
gfortran accepts (lines within the 132-character limit), with an
h5pset_filter_f line; and h5_examples/fortran holds exactly what the tool
prints for its spec."""
import json
import re

import pytest

import h5fz_testlib as lib

SPECS = [
    "abs=1e-3",
    "rel=1e-4",
    "pw_rel=1e-3 lorenzo_nd zigzag bitshuffle rze",
    "lossless",
    # a long chain: 20 words, several lines of the constructor
    "abs=0.5 delta zigzag delta zigzag delta zigzag bitshuffle rze subchunk=8192",
]


def _signed(w):
    return w - (1 << 32) if w >= 1 << 31 else w


def _fortran_block(text):
    """The integers of the Fortran array constructor in the text output."""
    block = text[text.index("Fortran:"):text.index("CALL h5pset_filter_f")]
    body = block[block.index("[") + 1:block.index("]")]
    return [int(v) for v in re.findall(r"-?\d+", body.replace("&", " "))], block


@pytest.mark.parametrize("spec", SPECS)
def test_fortran_words_are_the_signed_equivalents(spec):
    j = json.loads(lib.cli("cd-values", "--json", spec).stdout)
    want = [_signed(w) for w in j["cd_values"]]
    assert j["fortran_cd_values"] == want
    assert all(-(1 << 31) <= v < (1 << 31) for v in want)
    out = lib.cli("cd-values", spec).stdout
    got, block = _fortran_block(out)
    assert got == want, out
    n = len(want)
    assert "INTEGER :: cd_values(%d) = [" % n in block
    call = re.search(r"CALL h5pset_filter_f\(dcpl, (\d+), 0, INT\((\d+), SIZE_T\), cd_values, hdferr\)",
                     out)
    assert call and int(call.group(1)) == lib.FILTER_ID and int(call.group(2)) == n, out
    for line in out[out.index("Fortran:"):].splitlines():
        assert len(line) <= 132, line


def test_the_readme_example_word():
    """The issue's example: 3539053052 is -755914244."""
    j = json.loads(lib.cli("cd-values", "--json", "abs=1e-3").stdout)
    assert j["cd_values"][2] == 3539053052 and j["fortran_cd_values"][2] == -755914244


def test_fortran_example_holds_what_cd_values_prints():
    src = (lib.REPO / "h5_examples" / "fortran" / "h5fz_fortran.f90").read_text()
    m = re.search(r"integer :: cd_values\((\d+)\) = \[(.*?)\]", src, re.S)
    assert m, "no cd_values constructor in the example"
    words = [int(v) for v in re.findall(r"-?\d+", m.group(2).replace("&", " "))]
    j = json.loads(lib.cli("cd-values", "--json", "abs=1e-3").stdout)
    assert words == j["fortran_cd_values"] and int(m.group(1)) == len(words)
    assert "int(%d, size_t)" % len(words) in src


FORTRAN_PROGRAM = """program cd_values_check
  use hdf5
  implicit none
  integer(hid_t) :: file, space, dcpl, dset
  integer(hsize_t) :: dims(1) = [1000_hsize_t], chunk(1) = [500_hsize_t]
  integer :: hdferr, i
  real :: a(1000)
  %(declaration)s
  a = [(sin(0.01 * i), i = 1, 1000)]
  call h5open_f(hdferr)
  call h5fcreate_f("%(out)s", H5F_ACC_TRUNC_F, file, hdferr)
  call h5screate_simple_f(1, dims, space, hdferr)
  call h5pcreate_f(H5P_DATASET_CREATE_F, dcpl, hdferr)
  call h5pset_chunk_f(dcpl, 1, chunk, hdferr)
  %(call)s
  if (hdferr < 0) stop 2
  call h5dcreate_f(file, "d", H5T_IEEE_F32LE, space, dset, hdferr, dcpl)
  if (hdferr < 0) stop 3
  call h5dwrite_f(dset, H5T_NATIVE_REAL, a, dims, hdferr)
  if (hdferr < 0) stop 4
  call h5dclose_f(dset, hdferr)
  call h5pclose_f(dcpl, hdferr)
  call h5sclose_f(space, hdferr)
  call h5fclose_f(file, hdferr)
  call h5close_f(hdferr)
end program cd_values_check
"""


def test_printed_fortran_compiles_and_gives_the_c_cd_values(tmp_path):
    """The Fortran lines as printed (negative words, three continuation
    lines) pasted into a program, built with h5fc (HDF5's serial Fortran
    wrapper), run: the dataset's filter gets exactly the C cd_values."""
    import shutil
    import subprocess
    if shutil.which("h5fc") is None or shutil.which("gfortran") is None:
        pytest.skip("h5fc or gfortran not found (Debian: gfortran, libhdf5-dev)")
    spec = "abs=1e-3 delta zigzag delta zigzag delta zigzag bitshuffle rze"
    out = lib.cli("cd-values", spec).stdout
    block = out[out.index("Fortran:") + len("Fortran:"):]
    declaration, call = block.split("CALL ")
    src = tmp_path / "check.f90"
    h5 = tmp_path / "fortran.h5"
    src.write_text(FORTRAN_PROGRAM % {"declaration": declaration.strip(), "call": "CALL " + call.strip(),
                                      "out": h5})
    exe = tmp_path / "check"
    p = subprocess.run(["h5fc", "-shlib", "-o", str(exe), str(src)], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr + src.read_text()
    p = subprocess.run([str(exe)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    info = json.loads(lib.cli("inspect", h5, "/d", "--json").stdout)["datasets"][0]
    want = json.loads(lib.cli("cd-values", "--json", spec).stdout)["cd_values"]
    assert any(w >= 1 << 31 for w in want)
    assert info["filter_id"] == lib.FILTER_ID and info["filter_mandatory"]
    assert info["cd_values"][:len(want)] == want
