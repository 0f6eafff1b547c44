"""The ctypes side: finding and loading librooftune, and the C structs of rooftune.h.

The layouts below mirror runtime/include/rooftune.h field by field; on load they are checked
against the library's own sizes (rooftune_struct_size), so a package and a library of different
layouts refuse to work together instead of reading garbage.
"""
import ctypes
import ctypes.util
import os
import shutil
import subprocess

# The API version of rooftune.h this package was written against (ROOFTUNE_VERSION_MAJOR/MINOR).
API_MAJOR, API_MINOR = 0, 3

c_char_p, c_int, c_uint, c_double, c_void_p = ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_double, ctypes.c_void_p
c_longlong, c_size_t, c_float, c_ubyte = ctypes.c_longlong, ctypes.c_size_t, ctypes.c_float, ctypes.c_ubyte


class Query(ctypes.Structure):
    _fields_ = [
        ("family", c_char_p),
        ("shape", c_char_p),
        ("dtype", c_char_p),
        ("layout", c_char_p),
        ("device", c_char_p),
        ("flags", c_int),
        ("nearest_max", c_double),
        ("toolkit", c_char_p),
        ("reserved", c_void_p * 8),
    ]


class Match(ctypes.Structure):
    _fields_ = [
        ("match", c_int),
        ("mismatch", c_uint),
        ("distance", c_double),
        ("family", ctypes.c_char * 16),
        ("shape", ctypes.c_char * 64),
        ("dtype", ctypes.c_char * 8),
        ("layout", ctypes.c_char * 8),
        ("template_name", ctypes.c_char * 64),
        ("template_hash", ctypes.c_char * 72),
        ("config", ctypes.c_char * 768),
        ("device", ctypes.c_char * 128),
        ("cc_major", c_int),
        ("cc_minor", c_int),
        ("sm_count", c_int),
        ("toolkit", ctypes.c_char * 96),
        ("timing", ctypes.c_char * 12),
        ("time_ms", c_double),
        ("spread", c_double),
        ("entry", ctypes.c_char * 128),
        ("arch", ctypes.c_char * 16),
        ("cubin_size", c_size_t),
        ("library_algo", ctypes.c_char * 1024),
        ("geometry_ok", c_int),
        ("grid", c_uint * 3),
        ("block", c_uint * 3),
        ("smem", c_uint),
        ("vars", ctypes.c_char * 1024),
        ("id", c_longlong),
        ("rule", c_int),
        ("runnable", c_int),
        ("nearest_max", c_double),
        ("passed_count", c_int),
        ("passed_over", ctypes.c_char * 2048),
        ("reason", ctypes.c_char * 512),
        ("library", ctypes.c_char * 16),
        ("verified", c_int),
        ("checked_on", ctypes.c_char * 4),
        ("reserved", c_ubyte * 504),
    ]


class Info(ctypes.Structure):
    _fields_ = [
        ("path", c_int),
        ("template_name", ctypes.c_char * 64),
        ("config", ctypes.c_char * 768),
        ("reason", ctypes.c_char * 256),
        ("shape", ctypes.c_char * 64),
        ("distance", c_double),
        ("passed_count", c_int),
        ("passed_over", ctypes.c_char * 1024),
        ("verified", c_int),
        ("reserved", c_ubyte * 252),
    ]


class AttentionProblem(ctypes.Structure):
    _fields_ = [
        ("dtype", c_char_p),
        ("batch", c_longlong),
        ("heads_q", c_longlong),
        ("heads_kv", c_longlong),
        ("seq_q", c_longlong),
        ("seq_kv", c_longlong),
        ("head_dim", c_longlong),
        ("causal", c_int),
        ("page_size", c_int),
        ("num_pages", c_longlong),
        ("scale", c_float),
        ("q", c_void_p),
        ("k", c_void_p),
        ("v", c_void_p),
        ("o", c_void_p),
        ("lse", c_void_p),
        ("block_table", c_void_p),
        ("kv_lens", c_void_p),
        ("reserved", c_void_p * 8),
    ]


STRUCTS = {"rooftune_query": Query, "rooftune_match": Match, "rooftune_info": Info,
           "rooftune_attention_problem": AttentionProblem}

# rooftune.h's constants
MATCH_NONE, MATCH_EXACT, MATCH_NEAREST = 0, 1, 2
RULES = {0: "none", 1: "exact", 2: "nearest", 3: "next", 4: "library"}
EXACT_ONLY, ALLOW_MISMATCH, RUNNABLE, ALLOW_UNVERIFIED = 1, 2, 4, 8
MISMATCH = {1: "device", 2: "toolkit", 4: "template"}


class LibraryNotFound(OSError):
    """librooftune could not be found or loaded."""


def _candidates():
    env = os.environ.get("ROOFTUNE_LIBRARY")
    if env:
        yield env, "$ROOFTUNE_LIBRARY"
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("librooftune.so.0", "librooftune.so"):
        p = os.path.join(here, "lib", name)
        if os.path.exists(p):
            yield p, "the package's lib/ folder"
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "rooftune"], capture_output=True, text=True,
                                timeout=10).stdout.strip()
        if libdir:
            yield os.path.join(libdir, "librooftune.so.0"), "pkg-config rooftune"
    except (OSError, subprocess.SubprocessError):
        pass
    # where `cmake --install build --prefix P` put it: beside the installed command on the PATH
    # (P/bin/rooftune, P/lib/librooftune.so.0), and the usual prefixes
    command = shutil.which("rooftune")
    if command:
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(command)))
        for sub in ("lib", "lib64"):
            yield os.path.join(prefix, sub, "librooftune.so.0"), "beside the rooftune command (%s)" % command
    for prefix in (os.path.join(os.path.expanduser("~"), ".local"), "/usr/local"):
        p = os.path.join(prefix, "lib", "librooftune.so.0")
        if os.path.exists(p):
            yield p, "the %s prefix" % prefix
    yield "librooftune.so.0", "the dynamic loader"
    found = ctypes.util.find_library("rooftune")
    if found:
        yield found, "ctypes.util.find_library"


def _declare(lib):
    P = ctypes.POINTER
    sigs = {
        "rooftune_strerror": (c_char_p, [c_int]),
        "rooftune_status_name": (c_char_p, [c_int]),
        "rooftune_last_error": (c_char_p, []),
        "rooftune_version": (c_char_p, []),
        "rooftune_version_number": (c_int, []),
        "rooftune_struct_size": (c_size_t, [c_char_p]),
        "rooftune_open": (c_int, [c_char_p, P(c_void_p)]),
        "rooftune_close": (None, [c_void_p]),
        "rooftune_reload": (c_int, [c_void_p]),
        "rooftune_set_flags": (c_int, [c_void_p, c_int]),
        "rooftune_lookup": (c_int, [c_void_p, P(Query), P(Match)]),
        "rooftune_gemm_batched": (c_int, [c_void_p, c_char_p, c_char_p, c_longlong, c_longlong, c_longlong,
                                          c_longlong, c_void_p, c_void_p, c_void_p, c_void_p, P(Info)]),
        "rooftune_attention_shape": (c_int, [P(AttentionProblem), c_char_p, c_size_t]),
        "rooftune_attention": (c_int, [c_void_p, P(AttentionProblem), c_void_p, P(Info)]),
        "rooftune_kernel_load": (c_int, [c_void_p, P(Match), P(c_void_p)]),
        "rooftune_kernel_launch": (c_int, [c_void_p, c_void_p, P(c_void_p)]),
        "rooftune_kernel_free": (None, [c_void_p]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args


def load():
    """Finds, loads and checks librooftune; raises LibraryNotFound saying where it looked."""
    tried = []
    for path, how in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s): %s" % (path, how, e))
            continue
        try:
            _declare(lib)
        except AttributeError as e:
            tried.append("%s (%s): not a librooftune of this version: %s" % (path, how, e))
            continue
        number = lib.rooftune_version_number()
        major, minor = number // 10000, number // 100 % 100
        if (major, minor) != (API_MAJOR, API_MINOR):
            raise LibraryNotFound("%s is librooftune %s; this package needs %d.%d" % (
                path, lib.rooftune_version().decode(), API_MAJOR, API_MINOR))
        for cname, cls in STRUCTS.items():
            size = lib.rooftune_struct_size(cname.encode())
            if size != ctypes.sizeof(cls):
                raise LibraryNotFound("%s has a %s of %d bytes, this package one of %d: they are not the same version"
                                      % (path, cname, size, ctypes.sizeof(cls)))
        return lib, path
    raise LibraryNotFound("librooftune not found; set ROOFTUNE_LIBRARY to its path (a build's librooftune.so.0) or "
                          "install rooftune (cmake --install) where the loader finds it.  Tried:\n  " +
                          "\n  ".join(tried))
