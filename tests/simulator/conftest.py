import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: full-size simulator runs (deselect with -m 'not slow')")
