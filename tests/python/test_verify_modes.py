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
