"""Errors raised by the simulator. Each message names the instruction and the numbers."""


class SimulatorError(Exception):
    """Base class."""


class ProgramError(SimulatorError):
    """A malformed program or instruction (bad operand, unknown register, too many repeats ...)."""


class MemoryAccessError(SimulatorError):
    """Out-of-bounds, misaligned or over-capacity access."""


class RaceError(SimulatorError):
    """Two accesses to an overlapping region with no happens-before between them."""


class DeadlockError(SimulatorError):
    """A wait that is never satisfied."""


class SyncError(SimulatorError):
    """Misuse of sync resources (event id out of range, double set ...)."""


class AssemblyError(SimulatorError):
    """Text assembly that does not parse."""


class BufferTagError(SimulatorError):
    """An instruction reads UB bytes as one logical buffer that were last written as another (or never written)."""
