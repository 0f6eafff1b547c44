"""rooftune: look up and run CUDA kernels tuned by rooftune (ctypes over librooftune).

    db = rooftune.Database("tuning.db")
    m = db.lookup("gemm", "4096x4096x4096", "bf16")        # a Match: rule, template, config, ...
    c = rooftune.gemm(a, b, db=db)                          # PyTorch CUDA tensors, fp32 out
    o = rooftune.attention(q, k, v, db=db, causal=True)
    db.launch("vscale", "1048576", "f32", [x, y, ctypes.c_int32(n), ctypes.c_float(3.0)])
                                                            # a declared family's winner

The serving rules are librooftune's (rooftune.h): the winner tuned for the shape; else the
nearest tuned shape's winner when its kernel admits the shape, within a distance cap; else the
next winner that admits it; else the vendor library (cuBLASLt for gemm).  A Match says which
rule served and why better-ranked winners were passed over; gemm() and attention() report the
path that ran.  A winner whose output was never checked against the reference (predicted by the
model device, replayed, imported: Match.verified False) is not launched unless the Database is
opened with allow_unverified=True.  Errors raise RooftuneError with the library's status name and
message; arguments of the wrong type raise TypeError and out-of-range ones ValueError, each naming
the argument, before anything reaches the library; a closed Database raises DatabaseClosed.
"""
import ctypes
import math
import numbers
import os
import threading

from . import _lib

__all__ = ["Database", "DatabaseClosed", "Match", "CallInfo", "Kernel", "RooftuneError", "LibraryNotFound", "gemm",
           "attention", "attention_shape", "version", "library_path", "default_db_path"]

LibraryNotFound = _lib.LibraryNotFound
_state = {"lib": None, "path": None}
_lock = threading.Lock()


def _L():
    with _lock:
        if _state["lib"] is None:
            _state["lib"], _state["path"] = _lib.load()
        return _state["lib"]


def library_path():
    """The librooftune this package loaded."""
    _L()
    return _state["path"]


def version():
    """librooftune's version ("0.3.0")."""
    return _L().rooftune_version().decode()


class RooftuneError(Exception):
    """A librooftune call failed: code (ROOFTUNE_ERR_*), name ("ERR_INVALID") and the message."""

    def __init__(self, code, message):
        lib = _L()
        self.code = code
        self.name = lib.rooftune_status_name(code).decode()
        self.meaning = lib.rooftune_strerror(code).decode()
        self.message = message
        super().__init__("%s: %s" % (self.name, message or self.meaning))


class DatabaseClosed(ValueError):
    """A call on a Database after close() (or while close() waits for the calls in flight)."""


# ---- arguments: checked here, so nothing the C library would misread reaches it ----

_INT_RANGE = {"int": (-2 ** 31, 2 ** 31 - 1), "long long": (-2 ** 63, 2 ** 63 - 1)}


def _text(fn, name, value, optional=False):
    """A str argument as UTF-8 bytes (None when optional and None)."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise TypeError("rooftune.%s: %s must be a str%s, not %s" % (fn, name, " or None" if optional else "",
                                                                     type(value).__name__))
    if "\0" in value:
        raise ValueError("rooftune.%s: %s holds a NUL character (%r)" % (fn, name, value[:60]))
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError("rooftune.%s: %s is not valid text (%s)" % (fn, name, e)) from None


def _path(fn, name, value):
    """A path argument (str, bytes or os.PathLike) as bytes for the C library."""
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError("rooftune.%s: %s must be a path (str, bytes or os.PathLike), not %s"
                        % (fn, name, type(value).__name__))
    b = os.fsencode(value)
    if b"\0" in b:
        raise ValueError("rooftune.%s: %s holds a NUL character: %r" % (fn, name, b[:80]))
    if not b:
        raise ValueError("rooftune.%s: %s is empty" % (fn, name))
    return b


def _flag(fn, name, value):
    if isinstance(value, bool) or (isinstance(value, numbers.Integral) and value in (0, 1)):
        return bool(value)
    raise TypeError("rooftune.%s: %s must be True or False, not %r" % (fn, name, value))


def _int(fn, name, value, lo, ctype="long long"):
    """An integer argument in [lo, the C type's largest value]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError("rooftune.%s: %s must be an int, not %s" % (fn, name, type(value).__name__))
    value = int(value)
    hi = _INT_RANGE[ctype][1]
    if value < lo or value > hi:
        raise ValueError("rooftune.%s: %s = %d is out of range (%d to %d)" % (fn, name, value, lo, hi))
    return value


def _real(fn, name, value, positive=False):
    """A finite, non-negative (or positive) real argument."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError("rooftune.%s: %s must be a number, not %s" % (fn, name, type(value).__name__))
    value = float(value)
    if math.isnan(value) or math.isinf(value) or value < 0 or (positive and value == 0):
        raise ValueError("rooftune.%s: %s = %r is not a %s finite number" % (fn, name, value,
                                                                            "positive" if positive else "non-negative"))
    return value


_STATUS = {"ERR_NOT_FOUND": 4}


def _device_ptr(fn, name, a):
    """A device buffer as its address: an int, an object with __cuda_array_interface__ (CuPy,
    Numba, PyTorch) or one with data_ptr() (a PyTorch tensor, which must be on the GPU)."""
    if isinstance(a, bool):
        raise TypeError("rooftune.%s: %s is a bool: give a device pointer or a ctypes scalar" % (fn, name))
    if isinstance(a, numbers.Integral):
        ptr = int(a)
    else:
        cai = getattr(a, "__cuda_array_interface__", None)  # a CPU tensor raises: None
        if isinstance(cai, dict) and isinstance(cai.get("data"), tuple) and cai["data"]:
            ptr = cai["data"][0]
        elif callable(getattr(a, "data_ptr", None)):
            if getattr(a, "is_cuda", True) is False:
                raise ValueError("rooftune.%s: %s is not on the GPU (a CPU tensor): move it with .cuda()" % (fn, name))
            ptr = a.data_ptr()
        elif isinstance(a, float):
            raise TypeError("rooftune.%s: %s is a float: give its C type, ctypes.c_float(%r) or ctypes.c_double(%r)"
                            % (fn, name, a, a))
        else:
            raise TypeError("rooftune.%s: %s must be a device pointer (an int, an object with "
                            "__cuda_array_interface__ or data_ptr()) or a ctypes scalar (ctypes.c_int32(n)), "
                            "not %s" % (fn, name, type(a).__name__))
        if isinstance(ptr, bool) or not isinstance(ptr, numbers.Integral):
            raise TypeError("rooftune.%s: %s's address is %r, not an int" % (fn, name, ptr))
        ptr = int(ptr)
    if ptr < 0 or ptr >= 2 ** 64:
        raise ValueError("rooftune.%s: %s = %d is not a 64-bit device address" % (fn, name, ptr))
    return ctypes.c_uint64(ptr)


def _kernel_args(fn, args):
    """A kernel's arguments, in its family's order, as ctypes values: ctypes scalars as they are
    (their C type is the kernel parameter's), everything else a device pointer (_device_ptr)."""
    if isinstance(args, (str, bytes)) or not hasattr(args, "__iter__"):
        raise TypeError("rooftune.%s: args must be a list of the kernel's arguments, not %s" % (fn, type(args).__name__))
    out = []
    for i, a in enumerate(args):
        name = "args[%d]" % i
        if isinstance(a, (ctypes.c_char_p, ctypes.c_wchar_p, ctypes.c_void_p)):
            raise TypeError("rooftune.%s: %s is a ctypes %s: give a device pointer as an int" % (fn, name, type(a).__name__))
        out.append(a if isinstance(a, ctypes._SimpleCData) else _device_ptr(fn, name, a))
    return out


def _stream(fn, stream):
    """A CUstream / cudaStream_t handle: None (the default stream), an int, or an object with
    cuda_stream (torch.cuda.Stream)."""
    if stream is None:
        return None
    s = getattr(stream, "cuda_stream", stream)
    if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 0 or s >= 2 ** 64:
        raise TypeError("rooftune.%s: stream must be None, a stream handle (int) or an object with cuda_stream, "
                        "not %r" % (fn, stream))
    return int(s) or None


def _check(rc):
    if rc != 0:
        raise RooftuneError(rc, _L().rooftune_last_error().decode(errors="replace"))


def _s(b):
    return bytes(b).split(b"\0", 1)[0].decode(errors="replace")


def _lines(b):
    return [line for line in _s(b).split("\n") if line]


def _pairs(text):
    out = {}
    for item in filter(None, text.split(",")):
        k, _, v = item.partition("=")
        try:
            out[k] = int(v)
        except ValueError:
            out[k] = v
    return out


def default_db_path():
    """The database `rooftune tune` writes by default: $ROOFTUNE_DB, else
    $XDG_DATA_HOME/rooftune/tuning.db, else ~/.local/share/rooftune/tuning.db."""
    if os.environ.get("ROOFTUNE_DB"):
        return os.environ["ROOFTUNE_DB"]
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "rooftune", "tuning.db")


class Match:
    """What a lookup serves (rooftune_match).  found is False when no tuned winner serves the
    problem; rule then says whether the vendor library would ("library") or nothing ("none")."""

    def __init__(self, m):
        self._raw = m  # what rooftune_kernel_load takes
        self.rule = _lib.RULES.get(m.rule, "none")
        self.found = m.match != _lib.MATCH_NONE
        self.match = {_lib.MATCH_EXACT: "exact", _lib.MATCH_NEAREST: "nearest"}.get(m.match)
        self.distance = m.distance
        self.family, self.shape, self.dtype, self.layout = _s(m.family), _s(m.shape), _s(m.dtype), _s(m.layout)
        self.template = _s(m.template_name) or None
        self.config_text = _s(m.config)
        self.config = _pairs(self.config_text) if self.found and not _s(m.library_algo) else {}
        self.library_algo = _s(m.library_algo)
        self.time_ms = m.time_ms if self.found else None
        self.timing = _s(m.timing) or None
        self.device = _s(m.device) or None
        self.toolkit = _s(m.toolkit) or None
        self.mismatch = [name for bit, name in sorted(_lib.MISMATCH.items()) if m.mismatch & bit]
        self.verified = bool(m.verified)
        self.checked_on = m.checked_on.decode() or None  # "gpu", "sim" or None
        self.runnable = bool(m.runnable)
        self.cubin_bytes = m.cubin_size
        self.geometry = (tuple(m.grid), tuple(m.block), m.smem) if m.geometry_ok else None
        self.vars = _pairs(_s(m.vars))
        self.nearest_max = m.nearest_max
        self.passed_count = m.passed_count
        self.passed_over = _lines(m.passed_over)
        self.reason = _s(m.reason)
        self.library = _s(m.library) or None

    def __repr__(self):
        if self.found:
            return "<rooftune.Match %s: %s %s (%s, %s on %s%s)%s>" % (
                self.rule, self.template, self.shape, self.config_text, self.timing, self.device,
                "" if self.verified else ", not verified",
                " passed over %d" % self.passed_count if self.passed_count else "")
        return "<rooftune.Match %s: %s>" % (self.rule, self.reason)


class CallInfo:
    """What a gemm() or attention() call ran (rooftune_info): path is the rule ("exact",
    "nearest", "next", "library"), template the kernel or "cublaslt" / "cudnn", reason why the
    library ran, verified whether what ran is a tuned winner that passed its reference check.  An
    attention() call PyTorch computed has path "torch" (_fallback.TorchInfo)."""

    def __init__(self, i):
        self.path = _lib.RULES.get(i.path, "none")
        self.template = _s(i.template_name)
        self.config = _s(i.config)
        self.reason = _s(i.reason)
        self.shape = _s(i.shape)
        self.distance = i.distance
        self.passed_over = _lines(i.passed_over)
        self.verified = bool(i.verified)

    def __repr__(self):
        return "<rooftune.CallInfo %s: %s %s%s>" % (self.path, self.template, self.config,
                                                     " (%s)" % self.reason if self.reason else "")


class Kernel:
    """A tuned winner's kernel loaded into the CUDA context current in the calling thread
    (rooftune_kernel_load): launch(args) runs it with the geometry tuned for the looked-up shape
    (rooftune_kernel_launch).  From Database.kernel(); close() unloads it (as does the
    Database's close() for those its launch() loaded)."""

    def __init__(self, handle, match):
        self._k = handle
        self.match = match

    def launch(self, args, stream=None):
        """Launches on stream (None: the default stream; an int handle or a torch.cuda.Stream)
        with args in the family's order (family.json's "args"): device buffers as ints or objects
        with __cuda_array_interface__ / data_ptr(), scalars as ctypes values of the kernel's
        parameter types (ctypes.c_int32(n), ctypes.c_float(a)).  Asynchronous, as a CUDA launch."""
        vals = _kernel_args("Kernel.launch", args)
        st = _stream("Kernel.launch", stream)
        if not self._k:
            raise ValueError("rooftune.Kernel.launch: the kernel is closed")
        ptrs = (ctypes.c_void_p * max(1, len(vals)))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals])
        _check(_L().rooftune_kernel_launch(self._k, st, ptrs))

    def close(self):
        k, self._k = self._k, None
        if k:
            _L().rooftune_kernel_free(k)

    def __repr__(self):
        return "<rooftune.Kernel %s %s%s>" % (self.match.template, self.match.config_text,
                                             "" if self._k else " (closed)")


class Database:
    """A tuning database opened read-only (rooftune_open); usable from several threads.

    allow_unverified=True lets gemm() and attention() on it launch winners whose output was never
    checked against the reference (rooftune_set_flags): for trying a predicted kernel out, never
    for results that matter.

    close() may be called from any thread at any time: it waits for the calls in flight to
    finish, then frees the library's handle; every call after it raises DatabaseClosed."""

    def __init__(self, path=None, allow_unverified=False):
        if path is None:
            path = default_db_path()
        raw = _path("Database", "path", path)
        self.path = os.fsdecode(raw)
        self._h = ctypes.c_void_p()
        self._cv = threading.Condition()
        self._users = 0       # calls in flight that hold the handle
        self._closed = False
        self._kernels = {}    # launch()'s loaded kernels, by winner
        self.allow_unverified = _flag("Database", "allow_unverified", allow_unverified)
        h = ctypes.c_void_p()
        _check(_L().rooftune_open(raw, ctypes.byref(h)))
        self._h = h
        if self.allow_unverified:
            _check(_L().rooftune_set_flags(h, _lib.ALLOW_UNVERIFIED))

    def _acquire(self):
        """The library's handle, held until _release (close() waits for it)."""
        with self._cv:
            if self._closed or not self._h:
                raise DatabaseClosed("rooftune.Database(%r) is closed" % self.path)
            self._users += 1
            return self._h

    def _release(self):
        with self._cv:
            self._users -= 1
            if self._users == 0:
                self._cv.notify_all()

    def lookup(self, family, shape, dtype, layout=None, device=None, exact=False, allow_mismatch=False,
               runnable=False, nearest_max=None, toolkit=None, allow_unverified=False):
        """Serves (family, shape, dtype) by rooftune.h's rules; returns a Match.  runnable: only
        winners librooftune would launch (a cubin or library algorithm, verified unless
        allow_unverified)."""
        fn = "Database.lookup"
        q = _lib.Query()
        q.family, q.shape, q.dtype = _text(fn, "family", family), _text(fn, "shape", shape), _text(fn, "dtype", dtype)
        q.layout = _text(fn, "layout", layout, optional=True)
        q.device = _text(fn, "device", device, optional=True)
        q.toolkit = _text(fn, "toolkit", toolkit, optional=True)
        q.flags = (_lib.EXACT_ONLY if _flag(fn, "exact", exact) else 0) | \
                  (_lib.ALLOW_MISMATCH if _flag(fn, "allow_mismatch", allow_mismatch) else 0) | \
                  (_lib.RUNNABLE if _flag(fn, "runnable", runnable) else 0) | \
                  (_lib.ALLOW_UNVERIFIED if _flag(fn, "allow_unverified", allow_unverified) else 0)
        q.nearest_max = 0.0 if nearest_max is None else _real(fn, "nearest_max", nearest_max, positive=True)
        m = _lib.Match()
        h = self._acquire()
        try:
            _check(_L().rooftune_lookup(h, ctypes.byref(q), ctypes.byref(m)))
        finally:
            self._release()
        return Match(m)

    def reload(self):
        """Rereads the file on the next lookup (after another tune)."""
        h = self._acquire()
        try:
            _check(_L().rooftune_reload(h))
        finally:
            self._release()

    def kernel(self, family, shape, dtype, layout=None, device=None):
        """The winner serving (family, shape, dtype) that librooftune launches (a lookup with
        runnable=True: verified, unless the Database allows unverified winners), loaded into
        the CUDA context current in this thread: a Kernel.  Raises RooftuneError: ERR_NOT_FOUND
        when no runnable winner serves it (saying why), ERR_NO_DRIVER naming the CUDA driver that
        could not be loaded, ERR_NO_GPU without a current CUDA context."""
        m = self.lookup(family, shape, dtype, layout=layout, device=device, runnable=True,
                        allow_unverified=self.allow_unverified)
        if not m.found:
            raise RooftuneError(_STATUS["ERR_NOT_FOUND"], "no runnable winner serves %s %s %s%s" % (
                family, shape, dtype, ": " + (m.reason or "; ".join(m.passed_over)) if (m.reason or m.passed_over)
                else ""))
        if m.geometry is None:
            raise RooftuneError(_STATUS["ERR_NOT_FOUND"], "winner %s %s has no launch geometry for %s %s" % (
                m.template, m.config_text, family, shape))
        k = ctypes.c_void_p()
        h = self._acquire()
        try:
            _check(_L().rooftune_kernel_load(h, ctypes.byref(m._raw), ctypes.byref(k)))
        finally:
            self._release()
        return Kernel(k, m)

    def launch(self, family, shape, dtype, args, stream=None, layout=None, device=None):
        """Runs the winner serving (family, shape, dtype) (Database.kernel) with args in the
        family's order on stream (Kernel.launch), e.g. a declared family's

            db.launch("vscale", str(n), "f32", [x, y, ctypes.c_int32(n), ctypes.c_float(3.0)])

        with x and y PyTorch CUDA tensors (or device addresses).  The arguments are checked before
        anything reaches the library.  The kernel stays loaded for the next launch of that winner
        (one CUDA context per Database: for several, keep a Database.kernel() each); returns
        the Match that ran."""
        vals = _kernel_args("Database.launch", args)
        _stream("Database.launch", stream)
        m = self.lookup(family, shape, dtype, layout=layout, device=device, runnable=True,
                        allow_unverified=self.allow_unverified)
        key = (m.template, m.config_text, m.shape, m.device, m.time_ms) if m.found else None
        with self._cv:
            k = self._kernels.get(key)
        if k is None:
            k = self.kernel(family, shape, dtype, layout=layout, device=device)
            with self._cv:
                self._kernels[key] = k
        k.launch(vals, stream)
        return k.match

    def close(self):
        """Waits for the calls in flight, then frees the handle; later calls raise DatabaseClosed."""
        with self._cv:
            if self._closed:
                return
            self._closed = True
            while self._users:
                self._cv.wait()
            h, self._h = self._h, ctypes.c_void_p()
            kernels, self._kernels = list(self._kernels.values()), {}
        for k in kernels:
            k.close()
        if h:
            _L().rooftune_close(h)

    @property
    def closed(self):
        return self._closed

    def _open(self):
        if self._closed or not self._h:
            raise DatabaseClosed("rooftune.Database(%r) is closed" % self.path)

    def __enter__(self):
        self._open()
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            if getattr(self, "_cv", None) is not None:
                self.close()
        except Exception:
            pass


class _Using:
    """with _Using(db) as h: the handle of db (None for no database), held for the call."""

    def __init__(self, db, fn):
        if db is not None and not isinstance(db, Database):
            raise TypeError("rooftune.%s: db must be a rooftune.Database or None, not %s" % (fn, type(db).__name__))
        self.db = db

    def __enter__(self):
        return self.db._acquire() if self.db is not None else None

    def __exit__(self, *exc):
        if self.db is not None:
            self.db._release()


_GEMM_DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


def _torch():
    try:
        import torch
    except ImportError as e:
        raise ImportError("rooftune.gemm and rooftune.attention take PyTorch CUDA tensors: install torch") from e
    return torch


def _dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def gemm(a, b, out=None, db=None, return_info=False):
    """C = A @ B on the current CUDA stream with fp32 accumulation and an fp32 output.

    a: (M, K) or (batch, M, K), contiguous; b: (K, N) contiguous (layout "nn"), or the transpose
    of a contiguous (N, K) matrix, e.g. a linear layer's weight w.t() (layout "nt"); the same
    batch in front when a has one.  float32, float16 or bfloat16, both alike, on one CUDA device.
    out: an fp32 (M, N) / (batch, M, N) contiguous tensor to write, else a new one.  Runs the kernel
    librooftune serves for this GPU (db may be None: cuBLASLt), or cuBLASLt, as rooftune_gemm does;
    with return_info=True returns (out, CallInfo) saying which ran and why.
    """
    torch = _torch()
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, torch.Tensor) or not t.is_cuda:
            raise ValueError("rooftune.gemm: %s must be a CUDA tensor" % name)
    if a.dim() not in (2, 3) or b.dim() != a.dim():
        raise ValueError("rooftune.gemm: a and b must both be 2-D (M x K, K x N) or both 3-D (batched)")
    if a.dtype != b.dtype or _dtype_name(a) not in _GEMM_DTYPES:
        raise ValueError("rooftune.gemm: a and b must have one dtype of float32, float16, bfloat16 (got %s and %s)"
                         % (a.dtype, b.dtype))
    if a.device != b.device:
        raise ValueError("rooftune.gemm: a is on %s, b on %s" % (a.device, b.device))
    batch = a.shape[0] if a.dim() == 3 else 1
    M, K = a.shape[-2], a.shape[-1]
    if b.shape[-2] != K or (a.dim() == 3 and b.shape[0] != batch):
        raise ValueError("rooftune.gemm: shapes %s and %s do not multiply" % (tuple(a.shape), tuple(b.shape)))
    N = b.shape[-1]
    if not a.is_contiguous():
        raise ValueError("rooftune.gemm: a must be contiguous (row-major): call a.contiguous()")
    if b.is_contiguous():
        layout = "nn"
    elif b.transpose(-1, -2).is_contiguous():
        layout = "nt"  # B stored N x K: the transpose of a contiguous weight
    else:
        raise ValueError("rooftune.gemm: b must be row-major (K x N) or the transpose of a row-major N x K "
                         "matrix (a linear layer's weight.t()): call b.contiguous()")
    oshape = (batch, M, N) if a.dim() == 3 else (M, N)
    if out is None:
        out = torch.empty(oshape, dtype=torch.float32, device=a.device)
    elif (not isinstance(out, torch.Tensor) or out.dtype != torch.float32 or tuple(out.shape) != oshape or
          not out.is_contiguous() or out.device != a.device):
        raise ValueError("rooftune.gemm: out must be a contiguous float32 tensor of shape %s on %s" % (oshape, a.device))
    info = _lib.Info()
    with torch.cuda.device(a.device), _Using(db, "gemm") as h:  # the device's primary context current here
        stream = torch.cuda.current_stream(a.device).cuda_stream
        _check(_L().rooftune_gemm_batched(h, _GEMM_DTYPES[_dtype_name(a)].encode(), layout.encode(),
                                          batch, M, N, K, a.data_ptr(), b.data_ptr(), out.data_ptr(),
                                          stream, ctypes.byref(info)))
    return (out, CallInfo(info)) if return_info else out


def _attention_problem(fn, dtype, batch, heads_q, heads_kv, seq_q, seq_kv, head_dim, causal, page_size, num_pages,
                       scale):
    p = _lib.AttentionProblem()
    p.dtype = _text(fn, "dtype", dtype)
    p.batch, p.heads_q, p.seq_q, p.head_dim = (_int(fn, "batch", batch, 1), _int(fn, "heads_q", heads_q, 1),
                                               _int(fn, "seq_q", seq_q, 1), _int(fn, "head_dim", head_dim, 1))
    p.heads_kv, p.seq_kv = _int(fn, "heads_kv", heads_kv, 0), _int(fn, "seq_kv", seq_kv, 0)
    p.causal = int(_flag(fn, "causal", causal))
    p.page_size = _int(fn, "page_size", page_size, 0, "int")  # a C int: 2**40 would wrap to 0, contiguous
    p.num_pages = _int(fn, "num_pages", num_pages, 0)
    p.scale = 0.0 if scale is None else _real(fn, "scale", scale, positive=True)
    if p.scale and not math.isfinite(ctypes.c_float(p.scale).value):
        raise ValueError("rooftune.%s: scale = %r does not fit a float" % (fn, scale))
    return p


def attention_shape(dtype, batch, heads_q, seq_q, head_dim, heads_kv=0, seq_kv=0, causal=False, page_size=0):
    """The shape text lookups take for an attention problem ("1x32:8x1:8192x128:paged16")."""
    p = _attention_problem("attention_shape", dtype, batch, heads_q, heads_kv, seq_q, seq_kv, head_dim, causal,
                           page_size, 0, None)
    buf = ctypes.create_string_buffer(160)
    _check(_L().rooftune_attention_shape(ctypes.byref(p), buf, len(buf)))
    return buf.value.decode()


from ._fallback import sdpa_fallback as _sdpa_fallback  # noqa: E402 (it needs RooftuneError, above)


@_sdpa_fallback
def attention(q, k, v, out=None, db=None, causal=False, lse=None, block_table=None, kv_lens=None, scale=None,
              return_info=False):
    """O = softmax(scale * Q K^T) V per query head on the current CUDA stream (rooftune_attention).

    q: (B, SQ, HQ, D); k, v: (B, SKV, HKV, D), or with block_table (int32, B x pages per sequence)
    a paged pool (num_pages, page_size, HKV, D) as vLLM lays it out; kv_lens: optional int32 (B,)
    keys per sequence (at most SKV); lse: optional float32 (B, HQ, SQ) to receive the log-sum-exp.
    float16 or bfloat16, contiguous, one CUDA device.  out: (B, SQ, HQ, D) in q's dtype, else a
    new one.  Runs the kernel librooftune serves for this GPU, else cuDNN's fused attention
    (librooftune's fallback); where librooftune has neither for the call, PyTorch's
    torch.nn.functional.scaled_dot_product_attention computes it, and the info says so (path
    "torch", the reason).
    """
    torch = _torch()
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor) or not t.is_cuda or t.dim() != 4 or not t.is_contiguous():
            raise ValueError("rooftune.attention: %s must be a contiguous 4-D CUDA tensor" % name)
    if not (q.dtype == k.dtype == v.dtype) or _dtype_name(q) not in ("float16", "bfloat16"):
        raise ValueError("rooftune.attention: q, k and v must all be float16 or all bfloat16")
    if k.shape != v.shape:
        raise ValueError("rooftune.attention: k and v differ in shape: %s and %s" % (tuple(k.shape), tuple(v.shape)))
    B, SQ, HQ, D = q.shape
    HKV = k.shape[2]
    page_size, num_pages = 0, 0
    if block_table is not None:
        if block_table.dtype != torch.int32 or block_table.dim() != 2 or block_table.shape[0] != B or \
                not block_table.is_contiguous() or not block_table.is_cuda:
            raise ValueError("rooftune.attention: block_table must be a contiguous int32 CUDA tensor (B, pages)")
        num_pages, page_size = k.shape[0], k.shape[1]
        SKV = block_table.shape[1] * page_size
    else:
        if k.shape[0] != B:
            raise ValueError("rooftune.attention: k has %d sequences, q %d" % (k.shape[0], B))
        SKV = k.shape[1]
    if k.shape[3] != D:
        raise ValueError("rooftune.attention: head dims differ (q %d, k %d)" % (D, k.shape[3]))
    if kv_lens is not None and (kv_lens.dtype != torch.int32 or tuple(kv_lens.shape) != (B,) or not kv_lens.is_cuda):
        raise ValueError("rooftune.attention: kv_lens must be an int32 CUDA tensor of shape (%d,)" % B)
    if out is None:
        out = torch.empty_like(q)
    elif out.shape != q.shape or out.dtype != q.dtype or not out.is_contiguous() or out.device != q.device:
        raise ValueError("rooftune.attention: out must be a contiguous tensor like q")
    if lse is not None and (lse.dtype != torch.float32 or tuple(lse.shape) != (B, HQ, SQ) or not lse.is_contiguous()):
        raise ValueError("rooftune.attention: lse must be a contiguous float32 tensor of shape (%d, %d, %d)" % (B, HQ, SQ))
    p = _attention_problem("attention", {"float16": "f16", "bfloat16": "bf16"}[_dtype_name(q)], B, HQ, HKV, SQ,
                           SKV, D, causal, page_size, num_pages, scale)
    p.q, p.k, p.v, p.o = q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr()
    p.lse = lse.data_ptr() if lse is not None else None
    p.block_table = block_table.data_ptr() if block_table is not None else None
    p.kv_lens = kv_lens.data_ptr() if kv_lens is not None else None
    info = _lib.Info()
    with torch.cuda.device(q.device), _Using(db, "attention") as h:
        stream = torch.cuda.current_stream(q.device).cuda_stream
        _check(_L().rooftune_attention(h, ctypes.byref(p), stream, ctypes.byref(info)))
    return (out, CallInfo(info)) if return_info else out
