"""Text assembly: `to_text(program)` prints, `parse(text)` reads back; parse(to_text(p)) prints the same.

    kernel vadd core=aiv params=x,y,z,n {
      mov t, (n//128)
      loop i = 0, t, 1 {
        copy_gm_to_ub dst=0 src=(x+(i*256)) burst_len=256 n_burst=1 src_stride=0 dst_stride=0
        set_flag src_pipe=MTE2 dst_pipe=V event=0
      }
      if (t>0) {
      } else {
      }
    }

A mix kernel is `mix NAME params=... {` followed by its `kernel` for core=aic and core=aiv, then `}`.
`#` starts a comment to the end of the line: `to_text(p, comment)` prints `# <comment(node)>` before every node
(instruction, loop or if) for which the hook returns text (a compiler's note of where the node came from).
"""
from __future__ import annotations

from dataclasses import fields

from .errors import AssemblyError, ProgramError
from .expr import parse_expr
from .isa import MNEMONICS, SMov
from .program import If, Loop, MixProgram, Program


def to_text(p, comment=None) -> str:
    """The program's text; ``comment(node)``, when given, returns the text of a comment line before ``node`` or None."""
    if isinstance(p, MixProgram):
        return "\n".join([f"mix {p.name} params={','.join(p.params)} {{", to_text(p.aic, comment),
                          to_text(p.aiv, comment), "}"])
    lines = [f"kernel {p.name} core={p.core_type} params={','.join(p.params)} {{"]
    _body(p.body, lines, "  ", comment)
    lines.append("}")
    return "\n".join(lines)


def instr_text(ins) -> str:
    if isinstance(ins, SMov):
        return f"mov {ins.reg}, {ins.value}"
    fixed = MNEMONICS[ins.mnemonic][1]
    ops = " ".join(f"{f.name}={getattr(ins, f.name)}" for f in fields(ins) if f.name not in fixed
                   and str(getattr(ins, f.name)) != ins.OPTIONAL.get(f.name))
    return f"{ins.mnemonic} {ops}".rstrip()


def _body(body, lines, ind, comment):
    for n in body:
        note = comment(n) if comment is not None else None
        if note is not None:
            lines.append(f"{ind}# {note}")
        if isinstance(n, Loop):
            lines.append(f"{ind}loop {n.var} = {n.start}, {n.stop}, {n.step} {{")
            _body(n.body, lines, ind + "  ", comment)
            lines.append(f"{ind}}}")
        elif isinstance(n, If):
            lines.append(f"{ind}if {n.cond} {{")
            _body(n.then, lines, ind + "  ", comment)
            if n.orelse:
                lines.append(f"{ind}}} else {{")
                _body(n.orelse, lines, ind + "  ", comment)
            lines.append(f"{ind}}}")
        else:
            lines.append(ind + instr_text(n))


def parse(text: str):
    lines = [(i + 1, l.split("#")[0].strip()) for i, l in enumerate(text.splitlines())]
    lines = [(n, l) for n, l in lines if l]
    pos, prog = _parse_top(lines, 0)
    if pos != len(lines):
        raise AssemblyError(f"line {lines[pos][0]}: trailing text {lines[pos][1]!r}")
    return prog


def _header(line, n, word):
    parts = line.rstrip("{").split()
    if parts[0] != word or not line.endswith("{"):
        raise AssemblyError(f"line {n}: expected '{word} NAME ... {{', got {line!r}")
    kv = dict(p.split("=", 1) for p in parts[2:])
    return parts[1], kv


def _parse_top(lines, pos):
    n, line = lines[pos]
    if line.startswith("mix "):
        name, kv = _header(line, n, "mix")
        pos, aic = _parse_top(lines, pos + 1)
        pos, aiv = _parse_top(lines, pos)
        if lines[pos][1] != "}":
            raise AssemblyError(f"line {lines[pos][0]}: expected '}}' closing mix {name}")
        return pos + 1, MixProgram(name, _params(kv), aic, aiv)
    name, kv = _header(line, n, "kernel")
    pos, body = _parse_body(lines, pos + 1)
    return pos + 1, Program(name, kv.get("core", "aiv"), _params(kv), body)


def _params(kv):
    p = kv.get("params", "")
    return [x for x in p.split(",") if x]


def _parse_body(lines, pos):
    body = []
    while pos < len(lines):
        n, line = lines[pos]
        if line == "}" or line == "} else {":
            return pos, body
        try:
            if line.startswith("loop "):
                head = line[5:].rstrip("{").strip()
                var, rng = head.split("=", 1)
                start, stop, step = (parse_expr(x) for x in rng.split(", "))
                pos, inner = _parse_body(lines, pos + 1)
                body.append(Loop(var.strip(), start, stop, step, inner))
                pos += 1
            elif line.startswith("if "):
                cond = parse_expr(line[3:].rstrip("{").strip())
                pos, then = _parse_body(lines, pos + 1)
                orelse = []
                if lines[pos][1] == "} else {":
                    pos, orelse = _parse_body(lines, pos + 1)
                body.append(If(cond, then, orelse))
                pos += 1
            else:
                body.append(parse_instr(line))
                pos += 1
        except (ProgramError, AssemblyError, ValueError, KeyError) as e:
            if str(e).startswith("line "):
                raise
            raise AssemblyError(f"line {n}: {line!r}: {e}") from None
    raise AssemblyError("unexpected end of text: missing '}'")


def parse_instr(line: str):
    mnem, _, rest = line.partition(" ")
    if mnem == "mov":
        reg, val = rest.split(",", 1)
        return SMov(reg.strip(), parse_expr(val.strip()))
    if mnem not in MNEMONICS:
        raise AssemblyError(f"unknown mnemonic {mnem!r}")
    cls, fixed = MNEMONICS[mnem]
    kw = dict(fixed)
    for tok in rest.split():
        k, v = tok.split("=", 1)
        kw[k] = parse_expr(v) if k in cls.EXPRS else v
    return cls(**kw)
