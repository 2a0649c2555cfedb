"""pytest plugin (-p h5fz_inject) for h5py's own test suite: every float32
or float64 chunked dataset those tests create goes through h5fz, lossless
(their assertions compare values exactly), in place of gzip or of no
filter at all. h5py's dataset creation is the one place patched
(h5py._hl.filters.fill_dcpl, which create_dataset calls), so the tests run
unchanged. Integer and string datasets keep what the test asked for: h5fz
takes floats only. tests/python/test_ported_suites.py runs it."""
import numpy as np
import h5py
import h5py._hl.dataset
import h5py._hl.filters

import h5fz

LOSSLESS = h5fz.Filter(lossless=True)
_fill_dcpl = h5py._hl.filters.fill_dcpl
INJECTED = []  # (shape, dtype) of every dataset given h5fz, for the report


def _takes_h5fz(shape, dtype, chunks, compression, shuffle, fletcher32, maxshape, scaleoffset, external):
    if not shape or dtype is None or np.dtype(dtype).kind != "f" or np.dtype(dtype).itemsize not in (4, 8):
        return False
    if shuffle or scaleoffset is not None or external or chunks is False:
        return False  # shuffle and scaleoffset would come before h5fz; external storage has no chunks
    # chunked and unfiltered: a test that names a filter (gzip) checks it by
    # name after the create (h5py 3.16's make_new_dset), so it keeps it
    # (a maxshape makes h5py chunk it too)
    return compression is None and (chunks not in (None, False) or maxshape is not None)


def fill_dcpl(plist, shape, dtype, chunks, compression, compression_opts, shuffle, fletcher32, maxshape,
              scaleoffset, external, *args, **kwargs):
    if _takes_h5fz(shape, dtype, chunks, compression, shuffle, fletcher32, maxshape, scaleoffset, external):
        compression, compression_opts = LOSSLESS, None
        INJECTED.append((tuple(shape), np.dtype(dtype).str))
    return _fill_dcpl(plist, shape, dtype, chunks, compression, compression_opts, shuffle, fletcher32, maxshape,
                      scaleoffset, external, *args, **kwargs)


h5py._hl.filters.fill_dcpl = fill_dcpl
h5py._hl.dataset.filters.fill_dcpl = fill_dcpl  # dataset.py calls it as filters.fill_dcpl


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line("h5fz_inject: %d datasets created through h5fz (lossless), h5py %s, HDF5 %s"
                                % (len(INJECTED), h5py.version.version, h5py.version.hdf5_version))


# Tests that fail with any plugin filter in place, for a reason outside
# h5fz: (module, class::test) -> why.
XFAIL = {
    ("h5py.tests.test_dataset", "TestCreateLike::test_maxshape"):
        "h5py 3.16's create_dataset_like copies a plugin filter as compression='unknown', which its own "
        "fill_dcpl then refuses ('Compression filter \"unknown\" is unavailable'): any HDF5 plugin filter, "
        "hdf5plugin's too; not an h5fz bug",
}


def pytest_collection_modifyitems(config, items):
    import pytest
    for item in items:
        for (module, node), why in XFAIL.items():
            if getattr(item.module, "__name__", "") == module and item.nodeid.endswith("::" + node):
                item.add_marker(pytest.mark.xfail(reason=why, strict=True))
