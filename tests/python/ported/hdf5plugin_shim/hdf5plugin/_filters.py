"""SZ and SZ3 of the h5fz stand-in for hdf5plugin: h5fz.Filter with
hdf5plugin's keywords (its package docstring says how they map)."""
import h5fz

# hdf5plugin's keyword -> h5fz's mode
_MODES = {"absolute": "abs", "relative": "rel", "pointwise_relative": "pw_rel"}


class _SZBase(h5fz.Filter):
    filter_name = None
    _default = None  # (keyword, bound) when none is given

    def __init__(self, **bounds):
        given = {k: v for k, v in bounds.items() if v is not None}
        unknown = [k for k in given if k not in _MODES]
        if unknown:
            raise ValueError("h5fz has no %s error-bound mode (it has abs, rel, pw_rel and lossless)"
                             % ", ".join(unknown))
        if len(given) > 1:
            raise ValueError("give one error bound, not %s" % ", ".join(sorted(given)))
        keyword, bound = next(iter(given.items())) if given else self._default
        super().__init__(**{_MODES[keyword]: bound})

    def get_config(self):
        """hdf5plugin's keyword form: cls(**f.get_config()) == f."""
        config = super().get_config()
        keyword = {mode: name for name, mode in _MODES.items()}[self.mode]
        return {keyword: config[self.mode]}

    @classmethod
    def _from_filter_options(cls, filter_options):
        stored = h5fz.Filter.from_cd_values(filter_options)
        keyword = {mode: name for name, mode in _MODES.items()}[stored.mode]
        return cls(**{keyword: stored.bound})


class SZ(_SZBase):
    filter_name = "sz"
    _default = ("pointwise_relative", 1e-5)

    def __init__(self, absolute=None, relative=None, pointwise_relative=None):
        super().__init__(absolute=absolute, relative=relative, pointwise_relative=pointwise_relative)


class SZ3(_SZBase):
    filter_name = "sz3"
    _default = ("absolute", 1e-4)

    def __init__(self, absolute=None, relative=None, norm2=None, peak_signal_to_noise_ratio=None):
        super().__init__(absolute=absolute, relative=relative, norm2=norm2,
                         peak_signal_to_noise_ratio=peak_signal_to_noise_ratio)


FILTER_CLASSES = (SZ, SZ3)
