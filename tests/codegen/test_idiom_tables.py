"""The scratch table (graph_passes/idioms/scratch.py) and codegen's EMITTERS name the same ops: every emitted op
either has a scratch entry, or its scratch is sized per movement tile, or it is listed as taking none."""

from codegen import EMITTERS
from graph_passes.idioms.scratch import LOWERED_AS, MOVEMENT_SCRATCH, NO_SCRATCH, SCRATCH


def test_scratch_table_covers_the_emitters():
    groups = [set(SCRATCH), set(MOVEMENT_SCRATCH), set(NO_SCRATCH)]
    covered = set().union(*groups)
    assert sum(map(len, groups)) == len(covered), "an op is listed twice"
    assert sorted(set(EMITTERS) - covered) == [], "emitted ops with no scratch entry (add one, or list in NO_SCRATCH)"
    assert sorted(covered - set(EMITTERS)) == [], "scratch entries of ops codegen does not emit"


def test_lowered_ops_have_scratch_entries():
    assert sorted(set(LOWERED_AS.values()) - set(SCRATCH)) == []
