"""The vendored Unitree Go1 (src/sim2real/sim/models/unitree_go1): it loads from the package
alone, its mass and joints are the source's, the scene drives every leg joint, and the files
travel as package data (pyproject's globs match every file of the folder)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import mujoco
import numpy as np
import pytest

from sim2real.sim.builtin import MODELS_DIR
from sim2real.sim.model import load_sim_model

GO1 = MODELS_DIR / "unitree_go1"
LEGS = [
    f"{leg}_{part}_joint" for leg in ("FR", "FL", "RR", "RL") for part in ("hip", "thigh", "calf")
]


@pytest.fixture(scope="module")
def sim():
    return load_sim_model(GO1 / "scene.xml")


def test_mass_and_joints_are_the_sources(sim):
    m = sim.model
    # go1.xml's inertials: trunk 5.204 kg, per leg hip 0.68 + thigh 1.009 + calf 0.195862
    assert m.body_subtreemass[m.body("trunk").id] == pytest.approx(5.204 + 4 * 1.884862, abs=1e-9)
    names = [m.joint(i).name for i in range(m.njnt)]
    assert names == ["floating_base_joint", *LEGS]
    assert m.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE and (m.nq, m.nv) == (19, 18)
    assert m.joint("FR_calf_joint").range == pytest.approx([-2.818, -0.888])


def test_every_leg_joint_has_its_torque_motor(sim):
    m = sim.model
    driven = [m.joint(int(m.actuator_trnid[i, 0])).name for i in range(m.nu)]
    assert driven == LEGS and [m.actuator(i).name for i in range(m.nu)] == LEGS
    assert np.all(m.actuator_gear[:, 0] == 1.0) and not m.actuator_ctrllimited.any()


def test_standing_pose_touches_the_ground_with_four_feet(sim):
    # the home keyframe held by a stiff PD for 1 s: the body rests on its four feet, whose
    # touch sensors carry its weight (sum = m g within 2 %)
    m = sim.model
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, m.key("home").id)
    q0 = d.qpos[7:].copy()
    for _ in range(200):
        d.ctrl[:] = 60.0 * (q0 - d.qpos[7:]) - 2.0 * d.qvel[6:]
        mujoco.mj_step(m, d)
    touch = np.concatenate([d.sensor(f"{f}_touch").data for f in ("FR", "FL", "RR", "RL")])
    weight = m.body_subtreemass[1] * 9.81
    assert np.all(touch > 5.0) and touch.sum() == pytest.approx(weight, rel=0.02)
    assert 0.2 < d.qpos[2] < 0.3


def test_the_folder_is_package_data_and_small():
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    globs = pyproject["tool"]["setuptools"]["package-data"]["sim2real"]
    package = MODELS_DIR.parents[1]
    files = [p for p in GO1.rglob("*") if p.is_file()]
    shipped = {p for g in globs for p in package.glob(g)}  # setuptools' glob: * stops at /
    assert set(files) <= shipped, sorted(str(f) for f in set(files) - shipped)
    assert {"LICENSE", "README.md", "go1.xml", "scene.xml"} <= {f.name for f in files}
    assert sum(f.stat().st_size for f in files) < 3e6
