"""The compile cache on disk: a graph compiled once is not compiled again, in this process or the next.

Key: a SHA-256 of the imported module's IR text (locations included: they name the FX nodes in profiles), the
options that change what compiles (every option but :data:`RUNTIME_OPTIONS`, the chip among them), the project's
version (a hash of its own source files, computed once per process: an edited compiler never reads an old entry),
torch's and Python's versions and the entry format. What the importer gives besides the module (outputs, shape
symbols, size predicates, the host prologue) is rebuilt from the FX graph on every compile, so the IR text is all
the passes and codegen see.

Entry: ``<dir>/<key>.npuc`` = :data:`MAGIC`, one JSON header line (format version, key, payload size, payload
SHA-256), the payload (a pickle of what :func:`compile.compile_graph` would otherwise compute: the modules after
the passes, the kernels with their simulator programs, the pass report, the ladder's attempts). Written to a
temporary file in the same directory and renamed over the entry (readers see a whole entry or none). A missing
magic, a bad header, another format version or key, a short payload, a checksum mismatch or a payload that does not
unpickle is logged once (one line naming the entry and why), counted (``COUNTERS["cache_rejected"]``) and the graph
is recompiled and its entry rewritten — never trusted. A directory that cannot be written is a warning; compiling
goes on.

Location: ``$NPU_CACHE_DIR``, default ``$XDG_CACHE_HOME/npu`` (``~/.cache/npu``); ``NPU_CACHE_DIR=0`` or empty
turns the cache off, as does the option ``cache=False``. With ``debug_dir`` set the cache is bypassed (every pass
runs and is dumped). Counters: ``cache_hits``, ``cache_misses``, ``cache_writes``, ``cache_rejected``,
``cache_bypassed``, ``cache_write_errors``.

Note: entries are pickles, loaded with the rights of the process: the cache directory must be the user's own (as
for Inductor's FX graph cache).
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import hashlib
import json
import logging
import os
import pickle
import sys
import tempfile
import warnings
from pathlib import Path

from .stats import COUNTERS

log = logging.getLogger(__name__)

CACHE_DIR_ENV_VAR = "NPU_CACHE_DIR"
FORMAT_VERSION = 1
MAGIC = b"NPU-COMPILE-CACHE\n"
SUFFIX = ".npuc"
RUNTIME_OPTIONS = frozenset({"check_hazards", "fixed_costs", "debug_dir", "cache", "workers", "executor"})
"""Options read only when a compiled graph runs (or that decide whether the cache is used): not in the key."""
PROJECT_PACKAGES = ("torch_npu_backend", "graph_passes", "codegen", "simulator")
"""The packages whose sources make the project version."""

_reported: set[tuple[str, str]] = set()  # (entry or dir, reason) already logged/warned in this process


class CacheEntryError(Exception):
    """A cache entry that cannot be trusted; the message says why."""


def cache_dir_from_env() -> Path | None:
    """``$NPU_CACHE_DIR`` (unset: ``$XDG_CACHE_HOME/npu`` or ``~/.cache/npu``); None when it is ``0`` or empty."""
    value = os.environ.get(CACHE_DIR_ENV_VAR)
    if value is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base) / "npu"
    if value.strip() in ("", "0"):
        return None
    return Path(value)


@functools.cache
def project_version() -> str:
    """The project's version in keys: :func:`source_hash` of its packages, computed once per process."""
    return source_hash(Path(__file__).resolve().parent.parent, PROJECT_PACKAGES)


def source_hash(root: Path, packages) -> str:
    """SHA-256 over every ``.py`` file under ``root/<package>`` for each package: relative paths and contents."""
    h = hashlib.sha256()
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            h.update(path.relative_to(root).as_posix().encode() + b"\0")
            h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def cache_key(ir_text: str, options) -> str:
    """The entry key of a graph whose imported module prints as ``ir_text``, compiled with ``options``."""
    import torch

    compile_options = {f.name: getattr(options, f.name) for f in dataclasses.fields(options)
                       if f.name not in RUNTIME_OPTIONS}  # fmt: skip
    meta = json.dumps({"format": FORMAT_VERSION, "options": compile_options, "project": project_version(),
                       "torch": torch.__version__, "python": sys.version}, sort_keys=True, default=str)  # fmt: skip
    return hashlib.sha256(meta.encode() + b"\0" + ir_text.encode()).hexdigest()


def for_options(options) -> "CompileCache | None":
    """The cache ``options`` compile with, or None: ``cache=False``, ``NPU_CACHE_DIR=0``/empty, or ``debug_dir``
    set (bypassed, logged once: dumps of every pass are wanted)."""
    if not options.cache:
        return None
    directory = cache_dir_from_env()
    if directory is None:
        return None
    if options.debug_dir:
        COUNTERS["cache_bypassed"] += 1
        _report_once(log.info, "debug_dir", "bypassed",
                     f"npu compile cache bypassed: debug_dir={options.debug_dir} is set, every pass runs and is dumped")
        return None
    return CompileCache(directory)


class CompileCache:
    """Entries of one cache directory."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)

    def path(self, key: str) -> Path:
        return self.directory / f"{key}{SUFFIX}"

    def load(self, key: str, check=None):
        """The payload stored under ``key``; None on a miss or an entry rejected (logged once, then overwritten).
        ``check(payload)`` returns why a payload that unpickled is still not what the caller stored (or None)."""
        path = self.path(key)
        try:
            data = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):  # no entry (or no directory: the write will say why)
            COUNTERS["cache_misses"] += 1
            return None
        except OSError as e:
            return self._reject(path, f"unreadable ({e.strerror or e})")
        try:
            payload = decode_entry(data, key)
        except CacheEntryError as e:
            return self._reject(path, str(e))
        problem = check(payload) if check is not None else None
        if problem:
            return self._reject(path, problem)
        COUNTERS["cache_hits"] += 1
        return payload

    def store(self, key: str, payload) -> bool:
        """Write ``payload`` under ``key`` atomically; False (with a one-time warning) when it cannot be written."""
        try:
            data = encode_entry(payload, key)
        except Exception as e:  # noqa: BLE001 - an unpicklable payload must not fail the compile
            _report_once(warnings.warn, "pickle", type(e).__name__,
                         f"npu compile cache: a compiled graph cannot be pickled ({type(e).__name__}: {e}); "
                         f"it is not cached")  # fmt: skip
            COUNTERS["cache_write_errors"] += 1
            return False
        tmp = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=self.directory)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, self.path(key))
        except OSError as e:
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)
            _report_once(warnings.warn, str(self.directory), "unwritable",
                         f"npu compile cache: cannot write to {self.directory} ({e.strerror or e}); "
                         f"compiling without the cache")  # fmt: skip
            COUNTERS["cache_write_errors"] += 1
            return False
        COUNTERS["cache_writes"] += 1
        return True

    def _reject(self, path: Path, reason: str) -> None:
        COUNTERS["cache_rejected"] += 1
        _report_once(log.warning, str(path), reason, f"npu compile cache: entry {path} rejected: {reason}; recompiling")
        return None


def encode_entry(payload, key: str) -> bytes:
    body = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    header = {"format": FORMAT_VERSION, "key": key, "size": len(body), "sha256": hashlib.sha256(body).hexdigest()}
    return MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n" + body


def decode_entry(data: bytes, key: str):
    """The payload of an entry's bytes, or :class:`CacheEntryError` saying why it cannot be trusted."""
    if not data.startswith(MAGIC):
        raise CacheEntryError("not a cache entry (no magic line)" if data else "empty file")
    end = data.find(b"\n", len(MAGIC))
    if end < 0:
        raise CacheEntryError("truncated header")
    try:
        header = json.loads(data[len(MAGIC):end])
        version, stored_key, size, digest = header["format"], header["key"], header["size"], header["sha256"]
    except (ValueError, KeyError, TypeError) as e:
        raise CacheEntryError(f"corrupted header ({type(e).__name__})") from None
    if version != FORMAT_VERSION:
        raise CacheEntryError(f"stale: entry format {version!r}, this version reads {FORMAT_VERSION}")
    if stored_key != key:
        raise CacheEntryError(f"stale: written under key {str(stored_key)[:16]}…, not {key[:16]}…")
    body = data[end + 1:]
    if len(body) != size:
        raise CacheEntryError(f"truncated: payload of {len(body)} bytes, header says {size}")
    if hashlib.sha256(body).hexdigest() != digest:
        raise CacheEntryError("corrupted: payload checksum mismatch")
    gc_was_on = gc.isenabled()
    gc.disable()  # Note: the payload is ~10^5 small objects; collections while loading them cost 10x the load
    try:
        return pickle.loads(body)
    except Exception as e:  # noqa: BLE001 - a checksum-valid payload of an older class layout, for one
        raise CacheEntryError(f"payload does not load ({type(e).__name__}: {e})") from None
    finally:
        if gc_was_on:
            gc.enable()


def _report_once(emit, where: str, reason: str, message: str) -> None:
    if (where, reason) in _reported:
        return
    _reported.add((where, reason))
    emit(message)
