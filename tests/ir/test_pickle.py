"""IR modules pickle (the compile cache stores them): every registered op's example loads back printing the same,
structurally equal, with the same def-use lists; a long def-use chain pickles without deep recursion."""

import pickle

import pytest

import graph_passes  # noqa: F401  (registers every op)
from graph_passes.ir import OP_REGISTRY
from graph_passes.ir.equality import structural_diff
from graph_passes.ir.parser import parse_module
from graph_passes.ir.printer import print_module
from tests.ir.op_examples import OP_EXAMPLES


def _uses(module) -> list:
    """Per value (results and block arguments, in walk order): its uses as (user's walk position, operand index), by
    the module's ops (a pickle drops uses by ops outside the module: the parser leaves some)."""
    ops = list(module.walk())
    pos = {id(op): i for i, op in enumerate(ops)}
    values = [v for op in ops for v in op.results]
    values += [a for op in ops for r in op.regions for b in r.blocks for a in b.args]
    return [sorted((pos[id(u.op)], u.index) for u in v.uses if id(u.op) in pos) for v in values]


@pytest.mark.parametrize("op_name", sorted(OP_REGISTRY))
def test_every_op_pickles(op_name):
    module = parse_module(OP_EXAMPLES[op_name], filename=op_name)
    again = pickle.loads(pickle.dumps(module))
    assert print_module(again) == print_module(module)
    assert structural_diff(module, again) is None
    assert _uses(again) == _uses(module)


def test_long_def_use_chain_pickles():
    n = 3000
    body = "\n".join(f"    %v{i} = arith.addi {f'%v{i - 1}' if i else '%a'}, %a : (index, index) -> index"
                     for i in range(n))  # fmt: skip
    text = f"module {{\n  func.func @main(%a: index) -> index {{\n{body}\n    func.return %v{n - 1} : index\n  }}\n}}\n"
    module = parse_module(text)
    again = pickle.loads(pickle.dumps(module, protocol=pickle.HIGHEST_PROTOCOL))
    assert print_module(again) == print_module(module)
    assert _uses(again) == _uses(module)
    assert len(again.body.ops[0].body.args[0].uses) == n + 1
