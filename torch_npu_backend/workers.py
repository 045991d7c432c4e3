"""Timing jobs fanned out: a graph run's launch timings on a local process pool, Dask or Ray.

With ``simulate="once"`` and ``workers`` ≥ 2, a launch whose key has not been simulated yet gets its outputs from
the functional executor at once (simulator/functional.py) and its timing simulation — the full simulation with the
hazard checker — becomes a :class:`simulator.timing_job.TimingJob`. The jobs of one graph run are
:class:`TimingJobs`; the launch's profile record is filled in when the run finishes (:meth:`TimingJobs.wait`, from
``Launcher.finish``), in launch order, and an error a job raised (a race, a deadlock) is raised for that call.

Where jobs run (``executor``):

- ``"local"``: a process pool of ``workers`` processes (``forkserver``, else ``spawn``: a worker imports the
  simulator only, never torch), started lazily — only once a graph run has at least two pending jobs of at least
  :data:`MIN_POOL_JOB` instructions each — and kept for the process. Until then, and when it never starts, the jobs
  run serially in this process when the run finishes.
- ``"dask"``: the Dask client the user has (``distributed.get_client()``), else a local ``distributed.Client`` of
  ``workers`` processes; ``"ray"``: ``ray.init()`` if Ray is not initialised. The same job function
  (``simulator.timing_job.run``). Both are optional extras (``pip install npu[dask]`` / ``npu[ray]``).

``workers=1`` keeps everything serial in process: each new launch is simulated in full at once (no functional run,
no job), as before.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import sys
import types
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, replace

from simulator import functional
from simulator.timing_job import TimingJob, digest, run, snapshot

EXECUTORS = ("local", "dask", "ray")
EXECUTOR_PACKAGES = {"dask": ("distributed", "npu[dask]"), "ray": ("ray", "npu[ray]")}
MIN_POOL_JOB = 500
"""Instructions with a functional effect run by a launch for its timing job to count towards starting the pool. The
full simulation runs about 5-10 thousand of them per wall second (benchmarks/model_speed.py, small GPT-2), so a job
this size takes 50-100 ms, well above a worker's round trip (pickling the program and the GM both ways: a few ms)
and the pool's start (about a second, once per process) pays back over a graph with several."""

_POOLS: dict = {}  # (executor, workers) -> _Pool, alive for the process


def default_workers() -> int:
    """``$NPU_WORKERS`` when set, else the machine's cores (the ones this process may run on)."""
    env = os.environ.get("NPU_WORKERS")
    if env:
        if not env.isdigit() or int(env) < 1:
            raise ValueError(f"NPU_WORKERS={env!r} must be an int >= 1")
        return int(env)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def jobs_for(options) -> "TimingJobs | None":
    """A graph run's TimingJobs under ``options`` (simulate="once", workers >= 2), else None: serial, in process."""
    if options.simulate != "once":
        return None
    n = options.workers if options.workers is not None else default_workers()
    return TimingJobs(n, options.executor) if n >= 2 else None


@dataclass
class _Handle:
    """One timing job and what became of it (shared by the launch and the replays of its key in the same run)."""

    job: TimingJob
    functional_digest: str
    future: object = None  # the executor's future, once submitted
    outcome: object = None
    error: BaseException | None = None
    done: bool = False

    def settle(self) -> None:
        if self.done:
            return
        try:
            out = self.future.result() if self.future is not None else run(self.job)
            out.check(self.functional_digest, self.job.name)
            self.outcome = out
        except Exception as e:  # noqa: BLE001 - raised again, for this launch, by PendingLaunch.resolve
            self.error = e
            if isinstance(e, BrokenProcessPool):  # a worker died: the next run starts a fresh pool
                _drop_broken_pools()
        self.done = True
        self.job = None  # its program and GM copy are no longer needed


@dataclass
class PendingLaunch:
    """A launch whose outputs are known (functional execution) and whose timing is a job. Stands in
    ``CompiledKernel.recorded`` for its key: later launches with the key replay ``recording``."""

    handle: _Handle
    recording: object
    trace: bool
    replayed: bool = False
    note: str | None = None

    def replayable(self, trace: bool) -> bool:
        """Whether a launch with this key may replay it: not when its timing job failed (the failure is raised
        again by simulating again), nor when a trace is wanted and the job records none."""
        return not (self.handle.done and self.handle.error is not None) and (self.trace or not trace)

    def resolve(self):
        """The launch's LaunchResult once its job ran (waits for it); raises the job's error."""
        self.handle.settle()
        if self.handle.error is not None:
            raise self.handle.error
        return replace(self.handle.outcome.result, recording=self.recording, replayed=self.replayed, note=self.note)


class TimingJobs:
    """The timing jobs of one graph run; ``CompiledKernel.run(..., jobs=this)`` calls :meth:`defer`."""

    def __init__(self, workers: int, executor: str = "local"):
        self.workers, self.executor = workers, executor
        self.handles: list[_Handle] = []
        self.big = 0

    def defer(self, program, chip, block_dim: int, args: dict, gm, check_hazards: bool, trace: bool):
        """Run the launch functionally on ``gm`` (its outputs land there now) and make its timing a job."""
        before = snapshot(gm)
        recording = functional.execute(program, chip=chip, block_dim=block_dim, args=args, gm=gm, record=True)
        job = TimingJob(program, chip, block_dim, dict(args), before, check_hazards, trace, size=recording.n_effects)
        handle = _Handle(job, digest(gm))
        self.handles.append(handle)
        self.big += job.size >= MIN_POOL_JOB
        pool = _POOLS.get((self.executor, self.workers))
        if pool is None and self.big >= 2:
            pool = _pool(self.executor, self.workers)
        if pool is not None:
            for h in self.handles:
                if h.future is None and not h.done:
                    h.future = pool.submit(h.job)
        return PendingLaunch(handle, recording, trace)

    def wait(self) -> None:
        """Settle every job (those never submitted run here, serially); errors stay with their launches."""
        for h in self.handles:
            h.settle()

    def cancel(self) -> None:
        """The run failed: drop the jobs not started, keep none pending."""
        for h in self.handles:
            if h.future is not None and not h.done and hasattr(h.future, "cancel"):
                h.future.cancel()
            if not h.done:
                h.done, h.error, h.job = True, RuntimeError("the graph run that made this launch failed"), None


# -- executors ---------------------------------------------------------------------------------------------------------
def check_executor(executor: str) -> None:
    """Raise ImportError naming the extra when ``executor``'s package is not installed."""
    if executor in EXECUTOR_PACKAGES:
        import importlib.util

        module, extra = EXECUTOR_PACKAGES[executor]
        if importlib.util.find_spec(module) is None:
            raise ImportError(f"executor={executor!r} needs the {module!r} package, which is not installed "
                              f"(pip install '{extra}')")


class _Pool:
    def __init__(self, executor: str, workers: int):
        check_executor(executor)
        self.kind = executor
        if executor == "local":
            from concurrent.futures import ProcessPoolExecutor

            method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
            ctx = multiprocessing.get_context(method)
            if method == "forkserver":
                ctx.set_forkserver_preload(["simulator.timing_job"])
            self.impl = ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
        elif executor == "dask":
            from distributed import Client, get_client

            try:
                self.impl = get_client()
            except ValueError:  # no client yet: a local cluster of `workers` processes
                self.impl = Client(n_workers=workers, threads_per_worker=1, processes=True)
        else:
            import ray

            if not ray.is_initialized():
                ray.init(num_cpus=workers)
            self.impl = ray.remote(run)

    def submit(self, job: TimingJob):
        if self.kind == "ray":
            return self.impl.remote(job).future()
        if self.kind == "dask":
            return self.impl.submit(run, job, pure=False)
        with _main_hidden():  # a worker (started on demand by submit) must not import the user's script
            return self.impl.submit(run, job)

    def shutdown(self) -> None:
        if self.kind == "local":
            self.impl.shutdown(cancel_futures=True)


@contextmanager
def _main_hidden():
    """``__main__`` as an empty module while the pool starts processes: forkserver and spawn children import the
    parent's main script (to unpickle what it defines), which would run a script that compiles a model at top level
    again in every worker. The job function lives in ``simulator.timing_job``; the workers need nothing from it."""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def _pool(executor: str, workers: int) -> _Pool:
    pool = _POOLS.get((executor, workers))
    if pool is None:
        pool = _POOLS[(executor, workers)] = _Pool(executor, workers)
    return pool


def _drop_broken_pools() -> None:
    for key, pool in list(_POOLS.items()):
        if pool.kind == "local" and getattr(pool.impl, "_broken", False):
            del _POOLS[key]
            pool.shutdown()


def pools_started() -> list[tuple[str, int]]:
    """The (executor, workers) pools this process started."""
    return list(_POOLS)


@atexit.register
def shutdown() -> None:
    """Stop the pools this process started."""
    while _POOLS:
        _POOLS.popitem()[1].shutdown()
