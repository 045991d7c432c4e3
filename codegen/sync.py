"""``hivm.set_flag`` / ``hivm.wait_flag`` / ``hivm.pipe_barrier`` → the simulator's sync instructions;
``hivm.sync_block_set`` / ``hivm.sync_block_wait`` (a mix kernel's cross-core flags) → ``cross_set`` / ``cross_wait``.

Pipes map by name (``PIPE_MTE2`` → ``MTE2``, ``PIPE_ALL`` → ``ALL``); a flag with a selector uses
``event_ids[selector % len(event_ids)]`` — ``id0 + k % n`` when the ids are consecutive, else a sum of
``(k % n == i)·id_i`` — evaluated by the scalar unit at issue.
"""

from __future__ import annotations

from simulator.expr import Expr, Imm

from .errors import CodegenError

PIPES = {"PIPE_S": "S", "PIPE_MTE1": "MTE1", "PIPE_MTE2": "MTE2", "PIPE_MTE3": "MTE3", "PIPE_M": "M", "PIPE_V": "V",
         "PIPE_FIX": "FIX"}


def _pipe(op, name: str, allow_all: bool = False) -> str:
    if allow_all and name == "PIPE_ALL":
        return "ALL"
    if name not in PIPES:
        raise CodegenError(op, f"pipe {name} has no simulator sync lane (known: {', '.join(PIPES)})")
    return PIPES[name]


def _event(state, op) -> Expr:
    ids = list(op.attributes["event_ids"])
    if len(ids) == 1:
        return Imm(ids[0])
    k = state.index(op.operands[0]) % len(ids)
    if ids == list(range(ids[0], ids[0] + len(ids))):
        return ids[0] + k if ids[0] else k
    e: Expr = k.eq(0) * ids[0]
    for i, ev in enumerate(ids[1:], 1):
        e = e + k.eq(i) * ev
    return e


def _flag(state, op, mnemonic: str) -> None:
    src = _pipe(op, op.attributes["src_pipe"])
    dst = _pipe(op, op.attributes["dst_pipe"])
    if src == dst:
        raise CodegenError(op, f"a flag from {src} to itself (use pipe_barrier)")
    getattr(state.b, mnemonic)(src, dst, _event(state, op))


def emit_set_flag(state, op) -> None:
    _flag(state, op, "set_flag")


def emit_wait_flag(state, op) -> None:
    _flag(state, op, "wait_flag")


def emit_pipe_barrier(state, op) -> None:
    if op.attributes["pipe"] == "PIPE_S":
        raise CodegenError(op, "pipe_barrier on PIPE_S: the scalar unit runs in order (flags order it against pipes)")
    state.b.pipe_barrier(_pipe(op, op.attributes["pipe"], allow_all=True))


def emit_sync_block_set(state, op) -> None:
    """``hivm.sync_block_set`` → ``cross_set``: in the pipe's queue, to the other cores of the group."""
    state.b.cross_set(_pipe(op, op.attributes["pipe"]), op.attributes["flag"])


def emit_sync_block_wait(state, op) -> None:
    """``hivm.sync_block_wait`` → ``cross_wait``: the scalar unit waits (ASCENDC CrossCoreWaitFlag)."""
    state.b.cross_wait(op.attributes["flag"])
