"""`h5fz inspect` and `h5fz verify --require-filter` visit every stored
chunk. They used to ask HDF5 for chunk i by index (H5Dget_chunk_info),
which walks the chunk index from its start on every call: quadratic, 20 s
for 30k chunks, minutes for 100k. They now walk the chunk grid and look each
chunk up by its offset (cli/cli_chunk_walk.c, h5fz_cli_walk_chunks), near-linear,
and must still list the chunks in the index's order with the true offsets,
for every kind of chunk index HDF5 1.10 writes."""
import json
import os
import subprocess
import time

import h5py
import numpy as np
import pytest

import h5fz_testlib as lib

# The 50k-chunk test's CLI runs share this timeout: far more than they need
# (about a second in all), far less than the quadratic walk took (about 40 s
# per run here, four runs).
GENEROUS_S = 60


def _run(*args, walk=None, check=True, timeout=GENEROUS_S):
    env = dict(os.environ)
    if walk:
        env["H5FZ_CHUNK_WALK"] = walk
    p = subprocess.run([lib.BIN, *map(str, args)], capture_output=True, text=True, env=env,
                       timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError("h5fz %s failed (%d):\n%s%s" % (" ".join(map(str, args)),
                                                             p.returncode, p.stdout, p.stderr))
    return p


def _opts(spec="abs=1e-3"):
    cd, _ = lib.cd_values(spec)
    return dict(compression=lib.FILTER_ID, compression_opts=tuple(cd))


def test_fifty_thousand_tiny_chunks(tmp_path):
    """50k chunks of 8 floats: inspect (text, JSON, --summary) and verify
    --require-filter get through them all, within a generous timeout."""
    n = 50000
    data = np.sin(np.arange(n * 8) / 10.0).astype("f4").reshape(n, 8)
    path = tmp_path / "many.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("d", data=data, chunks=(1, 8), **_opts())
        assert d.id.get_num_chunks() == n
    deadline = time.monotonic() + GENEROUS_S

    def run(*args):
        return _run(*args, timeout=max(1.0, deadline - time.monotonic()))

    out = run("inspect", path, "--summary").stdout
    assert "total: %d chunks" % n in out and "unreadable 0" in out, out
    j = json.loads(run("inspect", path, "--json").stdout)["datasets"][0]
    assert j["totals"]["chunks"] == n and j["totals"]["unreadable_chunks"] == 0
    assert [c["index"] for c in j["chunks"]] == list(range(n))
    assert [c["offset"] for c in j["chunks"][:3]] == [[0, 0], [1, 0], [2, 0]]
    assert j["chunks"][-1]["offset"] == [n - 1, 0]
    with h5py.File(path, "r") as f:
        assert j["totals"]["stored_bytes"] == f["d"].id.get_storage_size()
    text = run("inspect", path).stdout
    lines = [l for l in text.splitlines() if l.lstrip()[:1].isdigit()]
    assert len(lines) == n and lines[-1].split()[:2] == [str(n - 1), "[%d,0]" % (n - 1)], lines[-1]
    v = json.loads(run("verify", path, path, "--abs", "0", "--require-filter",
                       "--json").stdout)["datasets"][0]
    assert v["chunks"] == n and v["unfiltered_chunks"] == 0 and v["filter_applied"]


def _layouts(path, libver):
    """A dataset per chunk index HDF5 writes: v1 B-tree (earliest format);
    with the 1.10 format a fixed array, extensible arrays (the unlimited
    dimension first, in the middle, last), a v2 B-tree (two unlimited
    dimensions), a single chunk; sparse ones (few chunks of a large grid),
    one without h5fz."""
    a = np.sin(np.arange(7 * 9 * 11) / 10.0).astype("f4").reshape(7, 9, 11)
    kw = dict(chunks=(2, 4, 5), **_opts())
    with h5py.File(path, "w", libver=libver) as f:
        f.create_dataset("fixed", data=a, **kw)
        f.create_dataset("u0", data=a, maxshape=(None, 9, 11), **kw)
        f.create_dataset("u1", data=a, maxshape=(7, None, 11), **kw)
        f.create_dataset("u2", data=a, maxshape=(20, 9, None), **kw)
        f.create_dataset("u12", data=a, maxshape=(7, None, None), **kw)
        d = f.create_dataset("sparse_u1", shape=a.shape, dtype="f4", maxshape=(7, None, 11), **kw)
        d[0:2, 4:8, 5:10] = 1
        d[6, 0, 0] = 2
        d[3, 8, 10] = 3
        d = f.create_dataset("sparse", shape=(1000, 1000), dtype="f4", chunks=(10, 10), **_opts())
        d[5, 5] = 1
        d[999, 999] = 2
        d[500, 3] = 4
        f.create_dataset("one", data=a, chunks=a.shape, **_opts())
        f.create_dataset("plain", data=a, chunks=(2, 4, 5), maxshape=(7, None, 11))


def _expected_offsets(d):
    """The offsets of d's allocated chunks, from the data (every chunk that
    holds a nonzero value was written)."""
    a = d[...]
    c = d.chunks
    out = set()
    for idx in zip(*np.nonzero(a)):
        out.add(tuple(int(i) // k * k for i, k in zip(idx, c)))
    return out


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_order_and_offsets_for_every_chunk_index(tmp_path, libver):
    path = tmp_path / ("idx_%s.h5" % libver)
    _layouts(path, libver if libver == "earliest" else ("latest", "latest"))
    with h5py.File(path, "r") as f:
        names = list(f)
        for name in names:
            d = f[name]
            got = json.loads(_run("inspect", path, "/" + name, "--json").stdout)["datasets"][0]
            offs = [tuple(c["offset"]) for c in got["chunks"]]
            assert got["totals"]["unreadable_chunks"] == 0, (name, got["chunks"])
            assert all(c.get("error", "not compressed by h5fz") == "not compressed by h5fz"
                       for c in got["chunks"]), (name, got["chunks"])
            assert len(offs) == d.id.get_num_chunks() == len(set(offs)), name
            assert set(offs) == _expected_offsets(d), name
            # Each offset names a chunk of that size (H5Dread_chunk: a lookup
            # by offset; HDF5 1.10's H5Dget_chunk_info_by_coord is wrong for
            # extensible arrays, as H5Dget_chunk_info is).
            for c in got["chunks"]:
                _, raw = d.id.read_direct_chunk(tuple(c["offset"]))
                assert len(raw) == c["stored_bytes"], (name, c)
            # Both walks (forced) list the same chunks in the same order.
            by_index = _run("inspect", path, "/" + name, "--json", walk="index").stdout
            by_grid = _run("inspect", path, "/" + name, "--json", walk="grid").stdout
            assert by_index == by_grid, name
            v = json.loads(_run("verify", path, path, "--abs", "0", "--dataset", "/" + name,
                                "--json", walk="grid").stdout)["datasets"][0]
            # verify counts the chunks of datasets h5fz is in the pipeline of.
            assert v["chunks"] == (0 if name == "plain" else len(offs)), name


def test_order_is_the_index_order(tmp_path):
    """Where HDF5 reports offsets correctly (everything but an extensible
    array whose unlimited dimension is not the first, where HDF5 1.10 gets
    them wrong), the order and offsets are exactly H5Dget_chunk_info's."""
    path = tmp_path / "order.h5"
    _layouts(path, ("latest", "latest"))
    with h5py.File(path, "r") as f:
        for name in ["fixed", "u0", "u12", "sparse", "one"]:
            d = f[name]
            ref = [tuple(d.id.get_chunk_info(i).chunk_offset)
                   for i in range(d.id.get_num_chunks())]
            got = json.loads(_run("inspect", path, "/" + name, "--json").stdout)["datasets"][0]
            assert [tuple(c["offset"]) for c in got["chunks"]] == ref, name
    # The extensible array with its unlimited dimension in the middle lists
    # that dimension slowest ("swizzled"), the others row-major.
    got = json.loads(_run("inspect", path, "/u1", "--json").stdout)["datasets"][0]
    offs = [tuple(c["offset"]) for c in got["chunks"]]
    assert offs == sorted(offs, key=lambda o: (o[1], o[0], o[2])), offs
    got = json.loads(_run("inspect", path, "/sparse_u1", "--json").stdout)["datasets"][0]
    assert [c["offset"] for c in got["chunks"]] == [[6, 0, 0], [0, 4, 5], [2, 8, 10]]


def test_unknown_walk_setting_is_named(tmp_path):
    """H5FZ_CHUNK_WALK=bogus is ignored with a warning (it was silent)."""
    path = tmp_path / "w.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("d", data=np.zeros((64, 8), "f4"), chunks=(8, 8), **_opts())
    p = _run("inspect", path, "--summary", walk="bogus")
    assert "ignoring H5FZ_CHUNK_WALK=bogus (want grid or index)" in p.stderr, p.stderr
    assert "total: 8 chunks" in p.stdout
    assert "ignoring" not in _run("inspect", path, "--summary", walk="grid").stderr
