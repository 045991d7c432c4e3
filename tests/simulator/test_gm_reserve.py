"""The DDR ledger's slot walk (gm_model.GmModel.reserve) against the array form it replaced: the same end times and
the same per-slot bookkeeping, bit for bit, over random sequences of reservations (contended and not)."""
import numpy as np

from simulator import get_chip
from simulator.gm_model import SLOT, GmModel


def reserve_arrays(used, slot_cap, t0, nbytes, rate):
    """The earlier array form: take what each of n slots allows, cumsum, double n until enough."""
    if nbytes <= 0:
        return t0, used
    i0 = int(t0 // SLOT)
    n = int(nbytes / rate / SLOT) + 2
    while True:
        if i0 + n > len(used):
            used = np.concatenate([used, np.zeros(max(len(used), i0 + n), np.float64)])
        free = np.maximum(slot_cap - used[i0:i0 + n], 0.0)
        dur = np.full(n, float(SLOT))
        dur[0] = (i0 + 1) * SLOT - t0
        take = np.minimum(rate * dur, free)
        cum = np.cumsum(take)
        if cum[-1] >= nbytes:
            break
        n *= 2
    j = int(np.searchsorted(cum, nbytes))
    need = nbytes - (cum[j - 1] if j else 0.0)
    used[i0:i0 + j] += take[:j]
    used[i0 + j] += need
    sj = t0 if j == 0 else (i0 + j) * SLOT
    return sj + need * dur[j] / take[j], used


def test_slot_walk_matches_the_array_form():
    rng = np.random.default_rng(0)
    chip = get_chip("ascend910b1")
    for trial in range(20):
        g = GmModel(chip, 48, 1 << 20)
        ref = np.zeros(4096, np.float64)
        t = 0.0
        for _ in range(300):
            t += float(rng.choice([0.0, rng.uniform(0, 200)]))
            nbytes = float(rng.choice([32768, 512, rng.integers(1, 200000)]))
            rate = float(rng.choice([110.0, 86.0, rng.uniform(1, 110)]))
            got = g.reserve(t, nbytes, rate)
            want, ref = reserve_arrays(ref, g.slot_cap, t, nbytes, rate)
            assert got == want
        m = min(len(ref), len(g.used))
        assert np.array_equal(g.used[:m], ref[:m]) and not g.used[m:].any() and not ref[m:].any()
