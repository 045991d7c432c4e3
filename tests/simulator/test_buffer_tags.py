"""The simulator's buffer-tag check (simulator/buffer_tags.py): tagged local reads must find the buffer they name."""

from __future__ import annotations

import numpy as np
import pytest

from simulator import GlobalMemory, ProgramBuilder, launch
from simulator.errors import BufferTagError


def _program(read_tag: str, second_load: bool = True, untagged_clobber: bool = False):
    b = ProgramBuilder("tags", core_type="aiv", params=["x", "y"])
    b.copy_gm_to_ub(0, b.reg("x"), 256, tags={"dst": "a"})
    if second_load:  # a second buffer planned into the same bytes
        b.copy_gm_to_ub(0, b.reg("x"), 256, tags={"dst": "b"})
    if untagged_clobber:
        b.set_flag("MTE2", "V", 0)
        b.wait_flag("MTE2", "V", 0)
        b.vadds("f16", 0, 0, 1.0, repeat=1)  # untagged: the bytes' tag becomes unknown
    b.set_flag("MTE2", "V", 1)
    b.wait_flag("MTE2", "V", 1)
    b.vmuls("f16", 256, 0, 2.0, repeat=1, tags={"src": read_tag, "dst": "c"})
    b.set_flag("V", "MTE3", 0)
    b.wait_flag("V", "MTE3", 0)
    b.copy_ub_to_gm(b.reg("y"), 256, 256, tags={"src": "c"})
    return b.build()


def _run(prog, check=True):
    gm = GlobalMemory()
    x, y = gm.put(np.ones(128, np.float16)), gm.alloc(256)
    return launch(prog, block_dim=1, args=dict(x=x, y=y), gm=gm, check_hazards=check)


def test_a_read_of_another_buffers_bytes_names_both_instructions_and_tags():
    with pytest.raises(BufferTagError) as err:
        _run(_program("a"))
    msg = str(err.value)
    assert "vmuls (pc" in msg and "as buffer 'a'" in msg and "buffer 'b' by copy_gm_to_ub (pc 1)" in msg, msg
    assert "UB[0x0000, 0x0100)" in msg


def test_the_buffer_last_written_reads_fine_and_the_check_rides_on_the_hazard_checker():
    _run(_program("b"))
    _run(_program("a"), check=False)  # no hazard checker, no tag check


def test_never_written_bytes_are_an_error_for_an_exact_read():
    b = ProgramBuilder("unwritten", core_type="aiv", params=["y"])
    b.copy_ub_to_gm(b.reg("y"), 0, 256, tags={"src": "a"})
    gm = GlobalMemory()
    with pytest.raises(BufferTagError, match=r"copy_ub_to_gm \(pc 0\) reads UB\[0x0000, 0x0100\) of core aiv0 as "
                                             r"buffer 'a', but nothing wrote those bytes since the launch"):
        launch(b.build(), block_dim=1, args=dict(y=gm.alloc(256)), gm=gm)


def test_a_vector_instruction_may_read_padding_never_written_but_not_another_buffer():
    """Whole repeats: the lanes past a partial tile's data are padding nothing wrote (READS_PADDING)."""
    b = ProgramBuilder("padding", core_type="aiv", params=[])
    b.vmuls("f16", 256, 0, 2.0, repeat=1, tags={"src": "a", "dst": "c"})
    launch(b.build(), block_dim=1, args={}, gm=GlobalMemory())
    with pytest.raises(BufferTagError, match="as buffer 'a'.* last written as buffer 'b'"):
        _run(_program("a"))


def test_untagged_writes_make_the_bytes_unknown_and_alternatives_match_a_member():
    _run(_program("a", untagged_clobber=True))
    _run(_program("a|b"))
    with pytest.raises(BufferTagError):
        _run(_program("a|d"))


def test_two_operands_claiming_different_buffers_at_the_same_bytes_cannot_both_pass():
    b = ProgramBuilder("same_bytes", core_type="aiv", params=["x"])
    b.copy_gm_to_ub(0, b.reg("x"), 256, tags={"dst": "b"})
    b.set_flag("MTE2", "V", 0)
    b.wait_flag("MTE2", "V", 0)
    b.vadd("f16", 512, 0, 0, repeat=1, tags={"src0": "a", "src1": "b", "dst": "c"})
    gm = GlobalMemory()
    with pytest.raises(BufferTagError, match="as buffer 'a'"):
        launch(b.build(), block_dim=1, args=dict(x=gm.put(np.ones(128, np.float16))), gm=gm)
