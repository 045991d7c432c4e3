"""Guards for every pytest run of this project."""

import pytest

# The default run selects several hundred tests; a run that selects almost none means collection broke
# (an import error swallowed, a wrong marker expression) and must not pass.
MIN_SELECTED_FOR_FULL_RUN = 50


def pytest_collection_finish(session):
    args = [a for a in session.config.args if not a.startswith("-")]
    full_run = all(a.rstrip("/") in ("tests", ".", session.config.rootpath.as_posix()) for a in args)
    keyword = session.config.getoption("keyword")
    if full_run and not keyword and len(session.items) < MIN_SELECTED_FOR_FULL_RUN:
        raise pytest.UsageError(
            f"only {len(session.items)} tests selected for a full run (expected at least "
            f"{MIN_SELECTED_FOR_FULL_RUN}): test collection is broken"
        )
