"""A device setting the process cannot honour never leaves data stored raw
behind an exit status of 0 (issue 30, "data never silently stored raw").

h5repack creates each dataset inside H5E_BEGIN_TRY and, when that H5Dcreate
fails, creates it again with the source's properties: before the fix,
set_local's refusal of H5FZ_DEVICE=gpux (or =gpu without a GPU) made
h5repack copy the dataset UNCOMPRESSED and exit 0. Now, under h5repack, the
chunks go to the CPU executor with one warning (the same bytes as
H5FZ_DEVICE=cpu); elsewhere (C through H5Pset_filter, h5py) H5Dcreate still
refuses with the reason, and nothing is stored (docs/filter.md, "h5repack").
"""
import os
import pathlib
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

import h5fz_testlib as lib

pytestmark = pytest.mark.skipif(shutil.which("h5repack") is None or shutil.which("h5dump") is None,
                                reason="h5repack/h5dump (Debian: hdf5-tools) not found")

BOUND = 1e-3
BUILD = pathlib.Path(os.environ["H5FZ_BUILD_DIR"])


def _has_gpu():
    return subprocess.run(["sh", "-c", "nvidia-smi -L"], capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def orig(tmp_path_factory):
    path = tmp_path_factory.mktemp("raw") / "orig.h5"
    field = lib.embedded_field()
    lib.to_hdf5(field, path, (10, 100, 100))
    return path


def _repack(src, dst, device, spec="abs=1e-3", strict=False):
    ud = lib.cli("cd-values", "--ud", spec).stdout.strip()
    env = {k: v for k, v in os.environ.items() if k not in ("H5FZ_QUIET", "H5FZ_DEVICE_STRICT")}
    env["H5FZ_DEVICE"] = device
    if strict:
        env["H5FZ_DEVICE_STRICT"] = "1"
    return subprocess.run(["h5repack", "-f", ud, str(src), str(dst)], capture_output=True, text=True, env=env)


def _chunks(path):
    with h5py.File(path, "r") as f:
        d = f["data"]
        return [d.id.read_direct_chunk(d.id.get_chunk_info(i).chunk_offset) for i in range(d.id.get_num_chunks())]


@pytest.mark.parametrize("device", ["gpux", "gpu", "cpu "])
def test_h5repack_compresses_on_the_cpu_with_one_warning(orig, tmp_path, device):
    out, ref = tmp_path / "c.h5", tmp_path / "ref.h5"
    p = _repack(orig, out, device)
    assert p.returncode == 0, p.stdout + p.stderr
    # the filter is on the stored dataset, as HDF5's own tool shows it
    dump = subprocess.run(["h5dump", "-pH", str(out)], capture_output=True, text=True, check=True).stdout
    assert "FILTER_ID 32770" in dump, dump
    ratio = orig.stat().st_size / out.stat().st_size
    assert ratio > 20, "%s: %d -> %d bytes: stored raw?" % (device, orig.stat().st_size, out.stat().st_size)
    with h5py.File(orig, "r") as f, h5py.File(out, "r") as g:
        assert lib.filter_ids(g["data"]) == [lib.FILTER_ID]
        lib.check_bound(f["data"][...], g["data"][...], BOUND, device)
    lib.cli("verify", orig, out, "--abs", repr(BOUND), "--require-filter")
    if device == "gpu" and _has_gpu():
        return  # the GPU ran: nothing to warn about
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("h5fz:")]
    assert len(lines) == 1 and "the CPU executor takes the chunks" in lines[0], p.stderr
    assert "UNCOMPRESSED" not in p.stderr, p.stderr
    # the CPU executor's bytes, chunk for chunk
    assert _repack(orig, ref, "cpu").returncode == 0
    assert _chunks(out) == _chunks(ref)


def test_h5repack_strict_fails_instead_of_copying_raw(orig, tmp_path):
    """H5FZ_DEVICE_STRICT=1 (tests, benchmarks) makes the chunk fail: h5repack
    exits non-zero; set_local does not refuse, which would copy raw."""
    p = _repack(orig, tmp_path / "s.h5", "gpux", strict=True)
    # h5repack prints no HDF5 stack for a failed write, only its own line
    assert p.returncode != 0 and "Error occurred while repacking" in p.stdout + p.stderr, p.stdout + p.stderr


def test_h5repack_bad_spec_says_the_copy_is_uncompressed(orig, tmp_path):
    """A spec set_local cannot code must still be refused (there is nothing
    to compress with); h5repack then copies raw and exits 0, which h5fz
    cannot change: the refusal line says so and names the way out."""
    p = subprocess.run(["h5repack", "-f", "UD=%d,0,2,99,1" % lib.FILTER_ID, str(orig), str(tmp_path / "b.h5")],
                       capture_output=True, text=True)
    assert "cd_values version word is 99" in p.stderr, p.stderr
    assert "h5repack now copies this dataset UNCOMPRESSED and exits 0" in p.stderr, p.stderr


def test_c_h5pset_filter_refuses_at_create(tmp_path):
    """A C program through H5Pset_filter (heat3d): H5Dcreate fails with the
    reason, the program exits non-zero, and no dataset is stored raw."""
    heat3d = BUILD / "bin" / "heat3d"
    if not heat3d.exists():
        pytest.skip("no heat3d in the build")
    out = tmp_path / "h.h5"
    p = subprocess.run([str(heat3d), str(out), "abs=1e-3"], capture_output=True, text=True,
                       env={**os.environ, "H5FZ_DEVICE": "gpux"})
    assert p.returncode != 0 and 'H5FZ_DEVICE="gpux": want auto, gpu or cpu' in p.stdout + p.stderr
    names = []
    if out.exists():
        with h5py.File(out, "r") as f:
            f.visit(lambda n: names.append(n) if isinstance(f[n], h5py.Dataset) else None)
    assert names == [], names


def test_h5py_refuses_at_create(tmp_path):
    """h5py (an optional filter, as h5py adds them): create_dataset raises
    with the reason; the file holds no dataset, raw or otherwise."""
    cd = list(lib.cd_values("abs=1e-3")[0])
    code = (
        "import h5py, numpy as np, sys\n"
        "with h5py.File(sys.argv[1], 'w') as f:\n"
        "    try:\n"
        "        f.create_dataset('x', data=np.sin(np.arange(10000) / 50.0).astype('f4'), chunks=(1000,),\n"
        "                         compression=%d, compression_opts=tuple(%r))\n"
        "        print('created')\n"
        "    except Exception as e:\n"
        "        print('refused:', e)\n"
        "    print('datasets', list(f))\n" % (lib.FILTER_ID, cd))
    out = tmp_path / "p.h5"
    p = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True,
                       env={**os.environ, "H5FZ_DEVICE": "gpux"})
    assert p.returncode == 0 and "refused:" in p.stdout and "datasets []" in p.stdout, p.stdout + p.stderr
    assert 'H5FZ_DEVICE="gpux"' in p.stdout, p.stdout


def _f16_file(path):
    with h5py.File(path, "w") as f:
        f.create_dataset("h", data=np.arange(1000, dtype="f2"), chunks=(100,))
    return path


def test_h5repack_type_refusal_says_the_copy_is_uncompressed(tmp_path):
    """A type h5fz does not take (float16): can_apply refuses, h5repack copies
    the dataset raw and exits 0 (HDF5's own behaviour); h5fz says so on
    stderr, once, as for a refused spec (a fresh user's finding: it said
    nothing)."""
    src = _f16_file(tmp_path / "f16.h5")
    ud = lib.cli("cd-values", "--ud", "abs=1e-3").stdout.strip()
    env = {k: v for k, v in os.environ.items() if k != "H5FZ_QUIET"}
    p = subprocess.run(["h5repack", "-f", ud, str(src), str(tmp_path / "o.h5")], capture_output=True, text=True,
                       env=env)
    assert "float16" in p.stderr or "16-bit" in p.stderr or "type" in p.stderr, p.stderr
    assert p.stderr.count("h5repack now copies this dataset UNCOMPRESSED") == 1, p.stderr


def _mixed_file(path):
    with h5py.File(path, "w") as f:
        f.create_dataset("temp", data=np.sin(np.arange(10000) / 50.0).astype("f4"), chunks=(1000,))
        f.create_dataset("count", data=np.arange(10000, dtype="i4"), chunks=(1000,))
    return path


def _h5repack_said(f_option, src, dst, *more):
    env = {k: v for k, v in os.environ.items() if k != "H5FZ_QUIET"}
    p = subprocess.run(["h5repack", *more, "-f", f_option, str(src), str(dst)], capture_output=True, text=True,
                       env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stderr


def test_h5repack_integer_refusal_names_the_type_not_the_words(tmp_path):
    """An integer dataset under h5repack -f UD=... (one spec for every
    dataset): no filter words can make h5fz take it, so the refusal says the
    type is not one h5fz takes and how to leave such datasets out (name
    only the float ones), not "fix the -f words" (a user's finding); that
    way out then works: no refusal, the integers unfiltered, the floats
    compressed."""
    src = _mixed_file(tmp_path / "mixed.h5")
    ud = lib.cli("cd-values", "--ud", "abs=1e-3").stdout.strip()
    said = _h5repack_said(ud, src, tmp_path / "all.h5")
    assert "dataset type is not IEEE float32/float64 (integer)" in said, said
    assert said.count("h5repack now copies this dataset UNCOMPRESSED") == 1, said
    assert "-f words" not in said, said
    assert "float32/float64 datasets only" in said and "h5repack -f /a,/b:UD=" in said, said
    said = _h5repack_said("/temp:" + ud, src, tmp_path / "named.h5")
    assert "h5fz:" not in said, said
    with h5py.File(tmp_path / "named.h5", "r") as f:
        assert lib.filter_ids(f["temp"]) == [lib.FILTER_ID] and lib.filter_ids(f["count"]) == []


def test_h5repack_alternating_refusals_are_each_said_once(tmp_path):
    """Datasets refused for two reasons in turn (integer, float16, integer,
    float16): each reason is said once, not once a dataset (a fresh user's
    finding: only the last reason was remembered)."""
    src = tmp_path / "alt.h5"
    with h5py.File(src, "w") as f:
        for i, dt in enumerate(["i4", "f2", "i4", "f2"]):
            f.create_dataset("d%d" % i, data=np.arange(1000).astype(dt), chunks=(100,))
        f.create_dataset("x", data=np.sin(np.arange(1000) / 9.0).astype("f4"), chunks=(100,))
    said = _h5repack_said(lib.cli("cd-values", "--ud", "abs=1e-3").stdout.strip(), src, tmp_path / "o.h5")
    assert said.count("(integer)") == 1 and said.count("2-byte float") == 1, said
    assert said.count("h5repack now copies this dataset UNCOMPRESSED") == 2, said


def test_h5repack_chunk_refusal_points_at_the_chunks(tmp_path):
    """A chunk over the format's limit is no fault of the words either: the
    line after the reason names h5repack -l. The dataset is never written,
    so its 2.4 GB chunk costs nothing."""
    src = tmp_path / "big.h5"
    with h5py.File(src, "w") as f:
        f.create_dataset("big", shape=(10,), maxshape=(None,), chunks=(300000000,), dtype="f8")
    said = _h5repack_said(lib.cli("cd-values", "--ud", "abs=1e-3").stdout.strip(), src, tmp_path / "o.h5")
    assert "the limit of the h5fz format" in said, said
    assert "-f words" not in said and "h5repack -l /name:CHUNK=DIMS" in said, said


def test_h5py_optional_filter_type_refusal_is_said(tmp_path):
    """h5py adds the filter as optional: on a float16 dataset HDF5 creates it
    and writes every chunk unfiltered. h5fz's can_apply refusal then says so
    on stderr (never raw in silence)."""
    cd = list(lib.cd_values("abs=1e-3")[0])
    code = (
        "import h5py, numpy as np, sys\n"
        "with h5py.File(sys.argv[1], 'w') as f:\n"
        "    f.create_dataset('h', data=np.arange(1000, dtype='f2'), chunks=(100,),\n"
        "                     compression=%d, compression_opts=tuple(%r))\n"
        "    print('created')\n" % (lib.FILTER_ID, cd))
    env = {k: v for k, v in os.environ.items() if k != "H5FZ_QUIET"}
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "p.h5")], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and "created" in p.stdout, p.stdout + p.stderr
    assert p.stderr.count("this dataset is stored UNCOMPRESSED") == 1, p.stderr


def test_h5py_bad_words_on_an_integer_dataset_fail_once_on_the_words(tmp_path):
    """Bad cd_values on an integer dataset through h5py (an optional filter):
    H5Dcreate fails on the words, and the type's refusal ("stored
    UNCOMPRESSED") is not said first: the dataset is not created at all."""
    code = (
        "import h5py, numpy as np, sys\n"
        "with h5py.File(sys.argv[1], 'w') as f:\n"
        "    try:\n"
        "        f.create_dataset('i', data=np.arange(100, dtype='i4'), chunks=(50,),\n"
        "                         compression=%d, compression_opts=(1, 0, 0))\n"
        "        print('created')\n"
        "    except Exception as e:\n"
        "        print('refused:', e)\n" % lib.FILTER_ID)
    env = {k: v for k, v in os.environ.items() if k != "H5FZ_QUIET"}
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "i.h5")], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and "refused:" in p.stdout and "invalid cd_values" in p.stdout, p.stdout + p.stderr
    assert "UNCOMPRESSED" not in p.stderr and "integer" not in p.stderr, p.stderr
    # good words on the same dataset: created, unfiltered, and said once
    code_ok = code.replace("(1, 0, 0)", "tuple(%r)" % (list(lib.cd_values("abs=1e-3")[0]),))
    p = subprocess.run([sys.executable, "-c", code_ok, str(tmp_path / "j.h5")], capture_output=True, text=True,
                       env=env)
    assert p.returncode == 0 and "created" in p.stdout, p.stdout + p.stderr
    assert p.stderr.count("this dataset is stored UNCOMPRESSED") == 1, p.stderr
    # the same type refused with the filter mandatory (h5py's low-level API): H5Dcreate fails, and nothing is said
    # of a dataset stored uncompressed
    code_mandatory = (
        "import h5py, numpy as np, sys\n"
        "with h5py.File(sys.argv[1], 'w') as f:\n"
        "    p = h5py.h5p.create(h5py.h5p.DATASET_CREATE)\n"
        "    p.set_chunk((50,))\n"
        "    p.set_filter(%d, h5py.h5z.FLAG_MANDATORY, tuple(%r))\n"
        "    try:\n"
        "        h5py.h5d.create(f.id, b'm', h5py.h5t.STD_I32LE, h5py.h5s.create_simple((100,)), dcpl=p)\n"
        "        print('created')\n"
        "    except Exception as e:\n"
        "        print('refused:', e)\n" % (lib.FILTER_ID, list(lib.cd_values("abs=1e-3")[0])))
    p = subprocess.run([sys.executable, "-c", code_mandatory, str(tmp_path / "m.h5")], capture_output=True, text=True,
                       env=env)
    assert p.returncode == 0 and "refused:" in p.stdout, p.stdout + p.stderr
    assert "UNCOMPRESSED" not in p.stderr, p.stderr
