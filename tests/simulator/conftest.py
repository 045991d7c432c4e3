import os
import sys

# one BLAS thread: the simulator's many small mmad products run several times faster (see docs/simulator.md)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: full-size simulator runs (deselect with -m 'not slow')")
