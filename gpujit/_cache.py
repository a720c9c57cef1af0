"""The files of the persistent kernel cache (``jit(cache=True)``, ``GPUJIT_CACHE=1``):
writing them, capping their total size, listing and clearing them.

A lookup never comes here: the extension (pymodule/cachefile.c) makes the
key, reads the entry file and checks it itself, so a hit imports nothing.
It calls ``store`` with the whole entry file it made when it has compiled a
kernel; this module owns the directory's permissions, atomic writes and the
size cap (least recently used entries go first), and ``cache_info()`` and
``cache_clear()``.

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
import time

from . import _gpujit

SUFFIX = ".gjk"
TEMP_PREFIX = ".tmp-"
DEFAULT_SIZE = 1 << 30            # bytes
STALE_TEMP_SECONDS = 3600         # a temporary file this old was left by a crashed writer
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

# The bytes the directory held at this process's last scan plus what it has
# written since (an overestimate when a write replaced an entry): a store
# scans the directory only when this passes the cap, not every time.
_estimate = {"directory": None, "bytes": 0}


def directory():
    """The cache directory: ``GPUJIT_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/gpujit``, else ``~/.cache/gpujit`` (the extension's
    answer, which its lookups use)."""
    return _gpujit._cache_directory()


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


def _owned_file(st):
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid()


def store(key, entry):
    """Writes entry (bytes: the whole file, header and payload) as key's,
    then, when the entries may pass the cap, evicts down to it.  A cache
    that cannot be written (read-only, full, a file in its place) is left
    alone, with one RuntimeWarning per directory: kernels still compile."""
    import tempfile   # only a store needs it
    d = directory()
    try:
        os.makedirs(d, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=d)   # mode 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(entry)
            os.replace(tmp, os.path.join(d, key + SUFFIX))
        except BaseException:
            _unlink(tmp)
            raise
        written = len(entry)
        if _estimate["directory"] != d or _estimate["bytes"] + written > size_limit():
            _estimate.update(directory=d, bytes=_evict(d, size_limit()))
        else:
            _estimate["bytes"] += written
    except OSError as exc:
        if d not in _unwritable:
            _unwritable.add(d)
            import warnings
            warnings.warn(f"gpujit's kernel cache at {d!r} cannot be written ({exc}); "
                          f"kernels are compiled as if not cached (set GPUJIT_CACHE_DIR)",
                          RuntimeWarning, stacklevel=2)


_unwritable = set()   # directories store() has warned about


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
    hits, misses = _gpujit._cache_counts()
    return {"directory": d, "entries": len(entries),
            "bytes": sum(size for _, size, _ in entries), "size_limit": size_limit(),
            "hits": hits, "misses": misses}


def clear():
    """Removes every entry of this user; returns how many."""
    entries = _scan(directory())
    for _, _, path in entries:
        _unlink(path)
    return len(entries)
