"""A cycle-approximate simulator of an Ascend-like AI core (Cube, Vector, MTE1/2/3, FIX, Scalar pipes).

Imports neither torch nor the compiler: numpy, ml_dtypes, tabulate and the stdlib only. See
docs/simulator.md for the model, the API and the calibration.
"""
from .assembly import parse, to_text
from .errors import (AssemblyError, DeadlockError, MemoryAccessError, ProgramError, RaceError, SimulatorError,
                     SyncError)
from .expr import Imm, Reg, emax, emin
from .launch import launch
from .memory import GlobalMemory
from .presets import PRESETS, ChipSpec, get_chip
from .program import If, Loop, MixProgram, Program, ProgramBuilder
from .report import LaunchResult, Stats, summary_table

__all__ = ["parse", "to_text", "AssemblyError", "DeadlockError", "MemoryAccessError", "ProgramError", "RaceError",
           "SimulatorError", "SyncError", "Imm", "Reg", "emax", "emin", "launch", "GlobalMemory", "PRESETS",
           "ChipSpec", "get_chip", "If", "Loop", "MixProgram", "Program", "ProgramBuilder", "LaunchResult",
           "Stats", "summary_table"]
