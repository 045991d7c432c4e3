"""Instruction idioms: how a vector op becomes instructions on the A2 vector unit — row, block and outer folds,
broadcast forms, scalar columns, math temporaries, repeat and mask limits — and the scratch each takes. The schedule
reads them to size buffers and estimate cost; codegen reads them to emit the same instructions (docs/codegen.md)."""
