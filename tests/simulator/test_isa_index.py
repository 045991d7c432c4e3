"""vci (CreateVecIndex) and vgather (Gather by UB byte offsets) against numpy."""
import ml_dtypes
import numpy as np
import pytest

from simulator import ProgramBuilder, ProgramError
from helpers import event_cycles, run_vector

OUT = 96 * 1024
NP = {"f16": np.float16, "f32": np.float32, "i32": np.int32, "i16": np.int16, "bf16": ml_dtypes.bfloat16,
      "u16": np.uint16}


@pytest.mark.parametrize("dt", ["i16", "f16", "i32", "f32"])
def test_vci_counts_across_repeats(dt):
    lanes = 256 // np.dtype(NP[dt]).itemsize
    out, res = run_vector(lambda b: b.vci(dt, OUT, 5, repeat=3), [np.zeros(8, np.float32)], 3 * 256)
    np.testing.assert_array_equal(out.view(NP[dt]), (np.arange(3 * lanes) + 5).astype(NP[dt]))
    assert event_cycles(res, "vci") == [30 + 3 * 1]  # start-up + 3 repeats of the "scalar" class


def test_vci_mask_and_register_first():
    def body(b):
        b.vdup("i32", OUT, -1, repeat=2)
        b.pipe_barrier("V")
        b.mov("r", 100)
        b.vci("i32", OUT, b.reg("r") * 2, repeat=2, mask=10)

    out, _ = run_vector(body, [np.zeros(8, np.float32)], 512)
    got = out.view(np.int32).reshape(2, 64)
    exp = np.full((2, 64), -1, np.int32)
    exp[:, :10] = 200 + np.arange(2)[:, None] * 64 + np.arange(10)[None, :]
    np.testing.assert_array_equal(got, exp)


def test_vci_rounds_f16_and_rejects_overflow_and_dtypes():
    out, _ = run_vector(lambda b: b.vci("f16", OUT, 2040, repeat=1), [np.zeros(8, np.float32)], 256)
    np.testing.assert_array_equal(out.view(np.float16), (np.arange(128) + 2040).astype(np.float16))
    with pytest.raises(ProgramError, match=r"vci \(pc \d+\): indices 32700..32827 do not fit i16"):
        run_vector(lambda b: b.vci("i16", OUT, 32700, repeat=1), [np.zeros(8, np.float32)], 256)
    with pytest.raises(ProgramError, match="vci: dtype bf16 not supported"):
        ProgramBuilder("t", "aiv", []).vci("bf16", 0, 0)


@pytest.mark.parametrize("dt", ["f32", "f16", "bf16", "i32", "i16", "u16"])
def test_vgather_by_byte_offsets(dt):
    rng = np.random.default_rng(3)
    es = np.dtype(NP[dt]).itemsize
    src = (rng.uniform(-100, 100, 300) if dt in ("f32", "f16", "bf16") else rng.integers(0, 1000, 300)).astype(NP[dt])
    n = 2 * (256 // es) + 7  # two full repeats and a partial one
    idx = rng.integers(0, 300, n)
    offsets = (idx * es).astype(np.uint32)
    lanes = 256 // es

    def body(b):
        b.vgather(dt, OUT, 0, 32768, src.nbytes, repeat=2)
        b.vgather(dt, OUT + 512, 0, 32768 + 2 * lanes * 4, src.nbytes, repeat=1, mask=7)

    out, res = run_vector(body, [src, offsets], n * es)
    np.testing.assert_array_equal(out.view(NP[dt]), src[idx])
    assert event_cycles(res, "vgather")[0] == 30 + 2 * 2  # start-up + 2 repeats of the "binary" class


def test_vgather_out_of_range_names_the_element_and_numbers():
    src = np.arange(8, dtype=np.float32)
    offsets = np.array([0, 4, 32] + [0] * 61, np.uint32)  # element 2 reads byte 32 of a 32-B source
    with pytest.raises(ProgramError, match=r"vgather \(pc \d+\): element 2 of repeat 0 has source offset 32 B, "
                                           r"outside the source of 32 B \(8 elements of 4 B\)"):
        run_vector(lambda b: b.vgather("f32", OUT, 0, 32768, 32, repeat=1, mask=3), [src, offsets], 32)
    offsets[2] = 6  # not a multiple of the element size
    with pytest.raises(ProgramError, match="source offset 6 B"):
        run_vector(lambda b: b.vgather("f32", OUT, 0, 32768, 32, repeat=1, mask=3), [src, offsets], 32)
    with pytest.raises(ProgramError, match="vgather: dtype i8 not supported"):
        ProgramBuilder("t", "aiv", []).vgather("i8", 0, 0, 0, 32)
