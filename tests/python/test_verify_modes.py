"""`h5fz verify --pw-rel E` and `--lossless` check the promises of the
pointwise-relative and lossless modes after h5repack, and fail files that
do not keep them."""
import h5fz_testlib as lib


def _repack(tmp_path, spec):
    field = lib.embedded_field()
    orig, comp = tmp_path / "orig.h5", tmp_path / "comp.h5"
    lib.to_hdf5(field, orig, (10, 64, 64))  # edge chunks
    _, ud = lib.cd_values(spec)
    lib.h5repack(orig, comp, ud)
    return orig, comp


def test_verify_pw_rel(tmp_path):
    orig, comp = _repack(tmp_path, "pw_rel=1e-5")
    assert lib.cli("verify", orig, comp, "--pw-rel", "1e-5", "--require-filter", check=False).returncode == 0
    # the same file cannot pass a tighter pointwise bound, nor bit-exactness
    assert lib.cli("verify", orig, comp, "--pw-rel", "1e-9", check=False).returncode == 1
    assert lib.cli("verify", orig, comp, "--lossless", check=False).returncode == 1


def test_verify_lossless(tmp_path):
    orig, comp = _repack(tmp_path, "lossless")
    p = lib.cli("verify", orig, comp, "--lossless", "--require-filter", check=False)
    assert p.returncode == 0, p.stdout + p.stderr


def test_verify_needs_exactly_one_mode(tmp_path):
    orig, comp = _repack(tmp_path, "lossless")
    assert lib.cli("verify", orig, comp, "--lossless", "--abs", "1", check=False).returncode == 2
    assert lib.cli("verify", orig, comp, "--pw-rel", "2", check=False).returncode == 2


def _pair(tmp_path, orig_values, comp_values):
    import h5py
    import numpy as np
    orig, comp = tmp_path / "a.h5", tmp_path / "b.h5"
    for path, values in ((orig, orig_values), (comp, comp_values)):
        with h5py.File(path, "w") as f:
            f["/x"] = np.array(values, dtype=np.uint32).view(np.float32)
    return orig, comp


ONE = 0x3F800000  # 1.0f
NAN_A, NAN_B = 0x7FC00001, 0x7FC12345  # two NaNs, other payloads


def test_verify_one_nan_rule_in_every_mode(tmp_path):
    """Every mode checks an element with the one element check of the mode
    table (h5fz_element_error), which `h5fz compress` makes too: a NaN that
    comes back as a NaN of another payload is no error in any mode (before,
    --lossless alone compared NaN bits), one that comes back as a number is."""
    orig, comp = _pair(tmp_path, [ONE, NAN_A, 0], [ONE, NAN_B, 0])
    for mode in (["--abs", "0"], ["--rel", "1e-3"], ["--pw-rel", "1e-3"], ["--lossless"]):
        p = lib.cli("verify", orig, comp, *mode, check=False)
        assert p.returncode == 0, (mode, p.stdout + p.stderr)
    orig, comp = _pair(tmp_path, [ONE, NAN_A, 0], [ONE, ONE, 0])
    for mode in (["--abs", "1"], ["--rel", "1"], ["--pw-rel", "0.5"], ["--lossless"]):
        p = lib.cli("verify", orig, comp, *mode, check=False)
        assert p.returncode == 1 and "nan MISMATCH" in p.stdout, (mode, p.stdout + p.stderr)


def test_verify_options_are_the_mode_table(tmp_path):
    """The bound options are the modes of the table, named in usage and
    checked by the spec's rule (pw_rel in (0, 1)); 0 checks exactness."""
    orig, comp = _pair(tmp_path, [ONE, 0x80000000], [ONE, 0])  # -0.0 back as +0.0
    p = lib.cli("verify", "--help")
    assert "--abs, --rel, --pw-rel, --lossless" in p.stdout, p.stdout
    p = lib.cli("verify", orig, comp, "--pw-rel", "1.5", check=False)
    assert p.returncode == 2 and "pointwise relative bound 1.5 must be in (0, 1)" in p.stderr, p.stderr
    assert lib.cli("verify", orig, comp, "--abs", "0", check=False).returncode == 0  # -0.0 == 0.0
    assert lib.cli("verify", orig, comp, "--pw-rel", "0.5", check=False).returncode == 1  # zeros exact
    assert lib.cli("verify", orig, comp, "--lossless", check=False).returncode == 1
