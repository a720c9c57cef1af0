"""The files of the persistent kernel cache (``jit(cache=True)``, ``GPUJIT_CACHE=1``).

The C dispatcher (pymodule/cache.c) calls in here only when it compiles a
new specialisation: ``enabled`` to ask whether to cache it, ``load`` with
the compile's key material (compiler/cache.c writes it), ``store`` with the
packed result, ``discard`` for an entry it could not unpack.  This module
owns the directory and its permissions, the entry files and their checks,
atomic writes, the size cap (least recently used entries go first) and the
hit and miss counts of this process.

An entry is one file, ``<key>.gjk``, where key is the SHA-256 (in hex) of
this gpujit build's identity and the key material::

    magic "GPUJITK\\0" | format (u32) | key (32 bytes) | payload length (u64)
    | SHA-256 of the payload (32 bytes) | payload

A file whose magic, format, key, length or checksum is not right is a miss
and is replaced by the next store; a file owned by another user (or not a
regular file) is never read.  Writers write a temporary file in the same
directory and rename it over the entry, so readers see a whole entry or
none, and processes that compile the same kernel at once all succeed.
"""
import math
import os
import stat
import struct
import time

# SHA-256 from CPython's own module when it has one: hashlib loads OpenSSL,
# which costs a new process's first cached launch more than all the rest
# (a few ms); the two give the same digests.
try:
    from _sha2 import sha256 as _sha256            # CPython 3.12 and later
except ImportError:
    try:
        from _sha256 import sha256 as _sha256      # CPython 3.11
    except ImportError:
        from hashlib import sha256 as _sha256      # builds without them (FIPS)

MAGIC = b"GPUJITK\0"
FORMAT = 1
SUFFIX = ".gjk"
TEMP_PREFIX = ".tmp-"
DEFAULT_SIZE = 1 << 30            # bytes
STALE_TEMP_SECONDS = 3600         # a temporary file this old was left by a crashed writer
_HEADER = struct.Struct("<8sI32sQ32s")
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

_counts = {"hits": 0, "misses": 0}
_identity = None
# The bytes the directory held at this process's last scan plus what it has
# written since (an overestimate when a write replaced an entry): a store
# scans the directory only when this passes the cap, not every time.
_estimate = {"directory": None, "bytes": 0}


def enabled(flag):
    """Whether to cache a kernel whose ``jit(cache=...)`` is ``flag``:
    ``GPUJIT_CACHE`` overrides it when set (``1`` caches every kernel,
    ``0`` none)."""
    env = os.environ.get("GPUJIT_CACHE", "").strip().lower()
    if not env:
        return bool(flag)
    return env not in ("0", "false", "no", "off")


def directory():
    """The cache directory: ``GPUJIT_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/gpujit``, else ``~/.cache/gpujit``."""
    d = os.environ.get("GPUJIT_CACHE_DIR")
    if d:
        return os.path.abspath(os.path.expanduser(d))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gpujit")


def size_limit():
    """The cap in bytes: ``GPUJIT_CACHE_SIZE`` (a number of bytes, optionally
    with K, M, G or T, binary multiples: ``512M``), else 1 GiB."""
    text = os.environ.get("GPUJIT_CACHE_SIZE", "").strip()
    if not text:
        return DEFAULT_SIZE
    number = text.upper().removesuffix("IB").removesuffix("B")
    unit = number[-1:] if number[-1:] in _UNITS else ""
    try:
        value = float(number[:len(number) - len(unit)])
    except ValueError:
        value = -1
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"GPUJIT_CACHE_SIZE must be a number of bytes, optionally with "
                         f"K, M, G or T (512M), not {text!r}")
    return int(value * _UNITS[unit])


def _build_identity():
    """What makes this gpujit build's code its own: its version and the
    extension's file (a rebuilt gpujit never loads another build's code)."""
    global _identity
    if _identity is None:
        from . import __version__, _gpujit
        st = os.stat(_gpujit.__file__)
        _identity = (f"gpujit {__version__}\0{_gpujit.__file__}\0{st.st_size}\0"
                     f"{st.st_mtime_ns}\0format {FORMAT}\0").encode()
    return _identity


def _path(key):
    return os.path.join(directory(), key + SUFFIX)


def _owned_file(st):
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid()


def _read(path, digest):
    """The payload of the entry at path if it is whole and is digest's; else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not _owned_file(os.fstat(f.fileno())):
            return None
        data = f.read()
    if len(data) < _HEADER.size:
        return None
    magic, fmt, key, length, checksum = _HEADER.unpack_from(data)
    payload = data[_HEADER.size:]
    if (magic, fmt, key, length) != (MAGIC, FORMAT, digest, len(payload)) or \
            _sha256(payload).digest() != checksum:
        return None
    try:
        os.utime(path)   # used now: evicted last
    except OSError:
        pass
    return payload


def load(material):
    """load(material) -> (key, payload or None): the entry of the compile
    whose key material is ``material`` (bytes)."""
    digest = _sha256(_build_identity() + material).digest()
    key = digest.hex()
    payload = _read(_path(key), digest)
    _counts["hits" if payload is not None else "misses"] += 1
    return key, payload


def discard(key):
    """The payload ``load`` gave for key did not unpack: a miss, and the file goes."""
    _counts["hits"] -= 1
    _counts["misses"] += 1
    try:
        os.unlink(_path(key))
    except OSError:
        pass


def store(key, payload):
    """Writes payload (bytes) as key's entry, then, when the entries may
    pass the cap, evicts down to it.  A cache that cannot be written
    (read-only, full) is left alone."""
    import tempfile   # only a store needs it (its import costs a hit ~1 ms)
    d = directory()
    header = _HEADER.pack(MAGIC, FORMAT, bytes.fromhex(key), len(payload),
                          _sha256(payload).digest())
    try:
        os.makedirs(d, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=d)   # mode 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(header)
                f.write(payload)
            os.replace(tmp, os.path.join(d, key + SUFFIX))
        except BaseException:
            _unlink(tmp)
            raise
        written = len(header) + len(payload)
        if _estimate["directory"] != d or _estimate["bytes"] + written > size_limit():
            _estimate.update(directory=d, bytes=_evict(d, size_limit()))
        else:
            _estimate["bytes"] += written
    except OSError:
        pass


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _scan(d):
    """[(mtime_ns, size, path)] of this user's entries in d; removes stale
    temporary files on the way."""
    found = []
    try:
        with os.scandir(d) as it:
            for entry in it:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not _owned_file(st):
                    continue
                if entry.name.endswith(SUFFIX) and not entry.name.startswith(TEMP_PREFIX):
                    found.append((st.st_mtime_ns, st.st_size, entry.path))
                elif entry.name.startswith(TEMP_PREFIX) and \
                        st.st_mtime_ns < time.time_ns() - STALE_TEMP_SECONDS * 10**9:
                    _unlink(entry.path)
    except OSError:   # no directory (yet), or not one that can be read
        pass
    return found


def _evict(d, limit):
    """Removes the least recently used entries until those left fit limit
    bytes; returns the bytes left."""
    entries = _scan(d)
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        _unlink(path)   # gone already when another process evicted it
        total -= size
    return total


def info():
    """What ``gpujit.cache_info()`` returns."""
    d = directory()
    entries = _scan(d)
    return {"directory": d, "entries": len(entries),
            "bytes": sum(size for _, size, _ in entries), "size_limit": size_limit(),
            "hits": _counts["hits"], "misses": _counts["misses"]}


def clear():
    """Removes every entry of this user; returns how many."""
    entries = _scan(directory())
    for _, _, path in entries:
        _unlink(path)
    return len(entries)
