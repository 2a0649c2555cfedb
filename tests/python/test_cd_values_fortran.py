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
