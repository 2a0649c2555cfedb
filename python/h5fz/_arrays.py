"""Host (numpy) and GPU (__cuda_array_interface__: CuPy, PyTorch, Numba)
arrays as the C library takes them: a pointer, a shape, a dtype."""
import ctypes

import numpy as np


_WHOLE_CONTEXT = object()


class DeviceArray:
    """A C-contiguous array in CUDA device memory, from its
    __cuda_array_interface__ (version 2 or 3)."""

    def __init__(self, obj, cai):
        self.obj = obj  # keeps the memory alive while we use it
        self.shape = tuple(int(n) for n in cai["shape"])
        self.dtype = np.dtype(cai["typestr"])
        self.ptr, self.readonly = int(cai["data"][0] or 0), bool(cai["data"][1])
        strides = cai.get("strides")
        if strides is not None and tuple(strides) != _c_strides(self.shape, self.dtype.itemsize):
            raise ValueError("h5fz: the GPU array is not C-contiguous (strides %s); pass a contiguous copy "
                             "(cupy.ascontiguousarray, tensor.contiguous())" % (tuple(strides),))
        if cai.get("mask") is not None:
            raise ValueError("h5fz: masked GPU arrays are not supported")
        # version 3 names the producer's stream (None: nothing to wait for);
        # older versions say nothing, so the whole context is waited for
        self.stream = cai["stream"] if "stream" in cai else _WHOLE_CONTEXT

    @property
    def nbytes(self):
        return int(np.prod(self.shape, dtype=np.uint64)) * self.dtype.itemsize

    def synchronize(self):
        """Wait for the producer's stream, as the interface asks consumers to
        (version 3: stream None means no synchronisation is needed)."""
        if self.stream is _WHOLE_CONTEXT:
            check(_cuda().cuCtxSynchronize(), "cuCtxSynchronize")
        elif self.stream is not None:
            check(_cuda().cuStreamSynchronize(ctypes.c_void_p(int(self.stream))), "cuStreamSynchronize")

    def to_host(self):
        """A numpy copy (for writes that must merge with stored chunks)."""
        host = np.empty(self.shape, self.dtype)
        if host.nbytes:
            self.synchronize()
            check(_cuda().cuMemcpyDtoH_v2(host.ctypes.data_as(ctypes.c_void_p), ctypes.c_uint64(self.ptr),
                                          ctypes.c_size_t(host.nbytes)), "cuMemcpyDtoH")
        return host


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


_CUDA = None


def _cuda():
    global _CUDA
    if _CUDA is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise RuntimeError("h5fz: a GPU array was given but libcuda.so.1 cannot be loaded: %s" % e) from None
        lib.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
        lib.cuCtxSynchronize.argtypes = []
        lib.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t]
        _CUDA = lib
    return _CUDA


def check(rc, what):
    if rc != 0:
        raise RuntimeError("h5fz: %s failed with CUDA error %d" % (what, rc))


def device_array(obj):
    """A DeviceArray when obj exposes __cuda_array_interface__, else None."""
    cai = getattr(obj, "__cuda_array_interface__", None)
    return None if cai is None else DeviceArray(obj, cai)
