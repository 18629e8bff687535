"""Local worker processes start fresh (a fork server's children, not copies of the caller): a
fork of a process whose other threads hold locks (torch's, a Ray driver's, pytest-xdist's
channel reader) can leave the copy waiting on one forever."""

from __future__ import annotations

from functools import partial

from sim2real.core.local_jobs import local_runner

_CALLER = {"changed": False}  # set by the test in this process only


def _sees_callers_change(k: int) -> tuple[int, bool]:
    return k, _CALLER["changed"]


def test_workers_start_fresh_not_as_copies_of_the_caller(monkeypatch):
    monkeypatch.setitem(_CALLER, "changed", True)
    jobs = [partial(_sees_callers_change, k) for k in range(3)]
    assert local_runner(1)(jobs) == [(0, True), (1, True), (2, True)]  # here: the change seen
    assert local_runner(2)(jobs) == [(0, False), (1, False), (2, False)]  # a fresh import each


ROTOR = """<mujoco><worldbody><body><joint name="j" type="hinge"/>
  <inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/></body></worldbody></mujoco>"""


def test_default_worker_counts_follow_the_cores_this_process_may_use(tmp_path):
    """Under an affinity of one core (taskset, a container's cpuset) the seed sweep and the
    batch simulator size themselves to that core, not to the machine's count."""
    import subprocess
    import sys

    (tmp_path / "rotor.xml").write_text(ROTOR)
    code = (
        "import os, sys; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
        "from sim2real.learn.seeds import default_workers\n"
        "from sim2real.params.space import ParamSpace\n"
        "from sim2real.sim.batch import BatchSimulator\n"
        "from sim2real.sim.model import load_sim_model\n"
        "sim = load_sim_model(sys.argv[1])\n"
        "print(default_workers(1), BatchSimulator(sim, ParamSpace(params=[])).nthread)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "rotor.xml")],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1", "1"]
