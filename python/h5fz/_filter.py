"""h5fz.Filter: the h5py/h5netcdf/xarray arguments of an h5fz spec."""
from collections.abc import Mapping
import numbers
import warnings

from . import _clib

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


class Filter(Mapping):
    """The filter arguments for one h5fz spec, as a mapping
    {"compression": FILTER_ID, "compression_opts": cd_values}:

        f.create_dataset("t", data=a, chunks=(16, 256, 256), **h5fz.Filter(abs=1e-3))
        ds.to_netcdf(path, engine="h5netcdf", encoding={"t": h5fz.Filter(rel=1e-4)})

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
    filter_id, filter_options (hdf5plugin's names).
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
        self._kwargs = {"compression": FILTER_ID, "compression_opts": self.cd_values}

    def __getitem__(self, key):
        return self._kwargs[key]

    def __iter__(self):
        return iter(self._kwargs)

    def __len__(self):
        return len(self._kwargs)

    def __repr__(self):
        return "h5fz.Filter(%r)" % self.spec
