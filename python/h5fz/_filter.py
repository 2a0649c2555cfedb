"""h5fz.Filter: the h5py/h5netcdf/xarray arguments of an h5fz spec."""
import numbers
import warnings

import h5py

from . import _clib

FilterRefBase = h5py.filters.FilterRefBase  # h5py >= 3.0: what compression= takes (hdf5plugin's filters too)

FILTER_ID = _clib.LIB.h5fzpy_filter_id()


MODES = _clib.modes()  # (name, takes_bound) of each error-bound mode: the C mode table's


def _bound(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError("h5fz.Filter: %s= takes a number, not %r" % (name, value))
    return "%s=%r" % (name, float(value))  # repr round-trips the double exactly


def _mode_words(bounds):
    """The spec words of the mode keywords in bounds (a dict name -> value):
    a bound, name=value, or a mode that takes none, name=True; None (and
    False for a mode without a bound) means not given."""
    known = dict(MODES)
    words = []
    for name, value in bounds.items():
        if name not in known:
            raise TypeError("h5fz.Filter: unknown keyword %s= (modes: %s; also chain=, subchunk=)"
                            % (name, ", ".join(m + "=" for m, _ in MODES)))
        if value is None:
            continue
        if known[name]:
            words.append(_bound(name, value))
        elif value not in (True, False):
            raise TypeError("h5fz.Filter: %s= takes True or False" % name)
        elif value:
            words.append(name)
    if len(words) > 1:
        raise ValueError("h5fz.Filter: give one of %s (got %s)"
                         % (", ".join(m + ("=" if b else "=True") for m, b in MODES), ", ".join(words)))
    return words


class Filter(FilterRefBase):
    """The filter arguments for one h5fz spec: an h5py FilterRefBase (as
    hdf5plugin's filters are), so both forms work,

        f.create_dataset("t", data=a, chunks=(16, 256, 256), compression=h5fz.Filter(abs=1e-3))
        f.create_dataset("t", data=a, chunks=(16, 256, 256), **h5fz.Filter(abs=1e-3))
        ds.to_netcdf(path, engine="h5netcdf", encoding={"t": h5fz.Filter(rel=1e-4)})

    and a mapping {"compression": FILTER_ID, "compression_opts": cd_values,
    "shuffle": False}: shuffle=False because h5fz must come first in the
    pipeline and xarray carries shuffle=True over from files netCDF wrote
    with it. Hashable; equal when the filter id and cd_values are.

    Give at most one bound, as the keyword of its mode (the modes of the C
    library's mode table, h5fz.MODES): abs= (|x - x'| <= abs), rel= (<= rel
    x each chunk's value range), pw_rel= (<= pw_rel x |x|), or
    lossless=True; none means the defaults (rel=1e-4, as UD=32770,0,0).
    chain= names the ops after the quantizer, as a string ("lorenzo_nd
    zigzag bitshuffle rze") or a sequence of names; subchunk= the sub-chunk
    size in bytes. Or pass a whole spec as text: Filter("abs=1e-3 delta
    zigzag bitpack").

    The text goes to the C spec parser, the one `h5fz cd-values` uses, so
    the cd_values are exactly the CLI's; a spec it refuses raises ValueError
    with its message. Attributes: spec (canonical text), cd_values,
    filter_id, filter_options (hdf5plugin's names), mode (one of the names in
    h5fz.MODES), bound, chain (the ops after the quantizer),
    subchunk; get_config() gives the keywords (Filter(**f.get_config()) == f). Filter.from_dataset
    and Filter.from_cd_values give the Filter a dataset was created with.
    """

    filter_id = FILTER_ID

    def __init__(self, spec=None, *, chain=None, subchunk=None, **bounds):
        given = [n for n, v in bounds.items() if v is not None and not (v is False and not dict(MODES).get(n, True))]
        keywords = bool(given) or chain is not None or subchunk is not None
        if spec is not None:
            if not isinstance(spec, str):
                raise TypeError("h5fz.Filter: spec must be text such as \"abs=1e-3\", not %r" % (spec,))
            if keywords:
                raise TypeError("h5fz.Filter: give either spec text or keywords, not both")
            text = spec
        else:
            words = _mode_words(bounds)
            if chain is not None:
                if isinstance(chain, str):
                    words.append(chain)
                elif isinstance(chain, (list, tuple)) and all(isinstance(op, str) for op in chain):
                    words.extend(chain)
                else:
                    raise TypeError("h5fz.Filter: chain= takes op names as text (\"delta zigzag bitpack\") "
                                    "or a list of them, not %r" % (chain,))
            if subchunk is not None:
                if isinstance(subchunk, bool) or not isinstance(subchunk, numbers.Integral):
                    raise TypeError("h5fz.Filter: subchunk= takes a whole number of bytes")
                words.append("subchunk=%d" % subchunk)
            text = " ".join(words)
        if "\x00" in text:  # C would stop reading there and drop the rest without a word
            raise ValueError("h5fz.Filter: the spec contains a NUL character: %r" % (text,))
        self.spec, self.cd_values, has_fill = _clib.spec_cd_values(text)
        caution = _clib.spec_caution(text)
        if caution:  # kept (SZ3 takes such a bound too), but said: docs/spec.md
            warnings.warn("h5fz.Filter: " + caution, UserWarning, stacklevel=2)
        if has_fill:
            raise ValueError("h5fz.Filter: fill= is not carried by cd_values; the filter takes the "
                             "dataset's own fill value (h5py: fillvalue=)")
        self.filter_options = self.cd_values
        mode, self.bound, self.subchunk, self.chain, _ = _clib.spec_view(self.cd_values)
        self.mode = dict(_clib.mode_ids())[mode]

    @property
    def _kwargs(self):
        return {"compression": FILTER_ID, "compression_opts": self.cd_values, "shuffle": False}

    def get_config(self):
        """The keyword form, as hdf5plugin's filters give it: {mode: bound
        (True for lossless), "chain": ..., "subchunk": ...};
        Filter(**f.get_config()) == f."""
        return {self.mode: self.bound if dict(MODES)[self.mode] else True, "chain": self.chain,
                "subchunk": self.subchunk}

    @classmethod
    def from_cd_values(cls, words):
        """The Filter that cd_values mean: the user words Filter made, or a
        dataset's pipeline words (set_local's dataset part is left out; it
        is the dataset's, not the spec's). Decoded by the C library, the
        decoder the filter uses; ValueError with its message when the words
        are not an h5fz spec. No warning for a rel= above 1: it was stored."""
        if isinstance(words, (str, bytes)) or not all(
                isinstance(w, numbers.Integral) and not isinstance(w, bool) and 0 <= w <= 0xffffffff
                for w in words):
            raise TypeError("h5fz.Filter.from_cd_values: takes a sequence of unsigned 32-bit words, not %r"
                            % (words,))
        _, _, _, _, text = _clib.spec_view(words)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return cls(text)

    @classmethod
    def from_dataset(cls, dset):
        """The Filter an h5py Dataset was created with, from its pipeline
        (all its words, read with H5Pget_filter2). ValueError naming the
        filters it has when h5fz is not one of them."""
        if not isinstance(dset, h5py.Dataset):
            raise TypeError("h5fz.Filter.from_dataset: expected an h5py.Dataset, got %s" % type(dset).__name__)
        from . import _binding, _hdf5
        dcpl = dset.id.get_create_plist()
        if _binding.hdf5 is not None:
            pipe = _hdf5.pipeline(_binding.hdf5, dcpl.id)
        else:  # not bound: h5py's own reader (3.7's garbles words past the 16th; a user part has 20 at most)
            pipe = [(f[0], f[1], list(f[2])) for f in (dcpl.get_filter(i) for i in range(dcpl.get_nfilters()))]
        for fid, _flags, words in pipe:
            if fid == FILTER_ID:
                return cls.from_cd_values(words)
        raise ValueError("h5fz.Filter.from_dataset: dataset %s has no h5fz filter (id %d); its filters: %s"
                         % (dset.name, FILTER_ID, [p[0] for p in pipe] or "none"))

    def __repr__(self):
        return "h5fz.Filter(%r)" % self.spec
