"""A reality whose model is a robot's own file with its own joint and body names (the DFKI
pendubot's URDF: Joint1, Joint2, Link1, Link2): ``joint_names`` / ``body_names`` map the task's
names to the model's, and the environment reads, drives and randomizes the model's joints under
the task's names. Before, such a URDF loaded and stopped at "no hinge or slide joint
'shoulder'"."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from cli_helpers import assert_one_line_error, run_cli

from sim2real.core.errors import InputError
from sim2real.learn.reality import load_reality, reality_env

ENV = "sim2real/PendubotSwingup-v0"
MAPS = {
    "joint_names": {"shoulder": "upper_joint", "elbow": "lower_joint"},
    "body_names": {"link1": "upper_link", "link2": "lower_link"},
}
ROBOT = """<robot name="double">
  <joint name="weld" type="fixed"><parent link="world"/><child link="base"/></joint>
  <link name="base"/>
  <link name="upper_link"><inertial><origin xyz="0 0 -0.3"/><mass value="0.55"/>
    <inertia ixx="0.003" iyy="0.003" izz="0.003" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="upper_joint" type="continuous"><parent link="base"/><child link="upper_link"/>
    <axis xyz="0 1 0"/><dynamics damping="0.01" friction="0.05"/></joint>
  <link name="lower_link"><inertial><origin xyz="0 0 -0.18"/><mass value="0.6"/>
    <inertia ixx="0.0035" iyy="0.0035" izz="0.0035" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="lower_joint" type="continuous"><parent link="upper_link"/><child link="lower_link"/>
    <origin xyz="0 0 -0.3"/><axis xyz="0 1 0"/></joint>
</robot>"""


@pytest.fixture()
def write(tmp_path):
    """``write(name, reality fields)``: a reality file beside the robot's URDF; its path."""
    (tmp_path / "double.urdf").write_text(ROBOT)

    def _write(name: str, doc: dict):
        path = tmp_path / name
        path.write_text(yaml.safe_dump({"model": "double.urdf", **doc}))
        return path

    return _write


def _value(env, name: str) -> np.ndarray:
    return env.values[:, env.space.names.index(name)]


def test_a_robots_urdf_is_read_driven_and_randomized_under_the_tasks_names(write):
    heavier = {"name": "masses", "target": "m*_kg", "mode": "reset", "distribution": "uniform",
               "range": [1.2, 1.2], "operation": "scale"}  # fmt: skip
    path = write("robot.yaml", {**MAPS, "params": {"damping2_Nm_s": 0.04},
                                "randomization": {"terms": [heavier]}})  # fmt: skip
    env = reality_env(load_reality(path), ENV, {}, 2, seed=0)
    env.reset(seed=0)
    m = env.stepper.models[0]
    # the task's parameters are the URDF's links and joints, and write into them
    assert _value(env, "m1_kg") == pytest.approx(1.2 * 0.55)
    assert m.body("link1").mass[0] == pytest.approx(1.2 * 0.55)
    assert m.body("link2").mass[0] == pytest.approx(1.2 * 0.6)
    assert _value(env, "frictionloss1_Nm") == pytest.approx(0.05)  # the URDF's <dynamics>
    assert m.dof_damping[env.dof[1]] == pytest.approx(0.04)  # the reality's, on the elbow
    # the URDF has no actuator: the shoulder gets a torque motor, the elbow stays passive
    assert m.nu == 1 and m.actuator_trnid[0, 0] == m.joint("shoulder").id
    for _ in range(10):
        env.step(np.ones((2, 1)))
    qvel = env.stepper.qvel[:, env.dof]
    assert np.all(qvel[:, 0] > 0.5) and np.all(qvel[:, 1] < 0)  # the elbow lags, passive


def test_names_the_model_lacks_or_the_task_does_not_read_are_one_line_errors(write):
    bare = write("bare.yaml", {})
    with pytest.raises(InputError) as err:
        reality_env(load_reality(bare), ENV, {}, 1, seed=0)
    assert err.value.source == str(bare) and err.value.field == "model"
    assert "the model's joints: upper_joint, lower_joint" in err.value.message
    assert "joint_names: {shoulder: <the model's>, elbow: <the model's>}" in err.value.message
    joints_only = write("joints.yaml", {"joint_names": MAPS["joint_names"]})
    with pytest.raises(InputError, match=r"body_names: \{link1: .*, link2: ") as err:
        reality_env(load_reality(joints_only), ENV, {}, 1, seed=0)
    assert "upper_link, lower_link" in err.value.message
    typo = write("typo.yaml", {**MAPS, "joint_names": {"shoulder": "uper_joint"}})
    with pytest.raises(InputError) as err:
        reality_env(load_reality(typo), ENV, {}, 1, seed=0)
    assert err.value.source == str(typo) and err.value.field == "joint_names.shoulder"
    assert "close matches: upper_joint" in err.value.message
    assert "the model's joints: upper_joint, lower_joint" in err.value.message
    unread = write("unread.yaml", {**MAPS, "joint_names": {"wrist": "upper_joint"}})
    with pytest.raises(InputError) as err:
        reality_env(load_reality(unread), ENV, {}, 1, seed=0)
    assert err.value.source == str(unread) and err.value.field == "joint_names.wrist"
    assert "reads no joint 'wrist'" in err.value.message and "shoulder, elbow" in err.value.message
    no_model = write("no_model.yaml", MAPS)
    no_model.write_text(yaml.safe_dump(MAPS))
    with pytest.raises(InputError, match="name that model too") as err:
        load_reality(no_model)
    assert err.value.field == "joint_names"


@pytest.mark.slow
def test_policy_eval_runs_a_pendubot_policy_on_a_mapped_urdf(write, tmp_path):
    from sim2real.learn.train import TrainConfig, train

    run = tmp_path / "run"
    cfg = TrainConfig(total_env_steps=8 * 16, num_envs=8, steps_per_env=16)
    train(run, ENV, train_config=cfg, quiet=True)
    reality = write("robot.yaml", MAPS)
    proc = run_cli("policy", "eval", run, "--reality", reality, "--episodes", 2)
    assert proc.returncode == 0, proc.stderr
    assert "robot: success 0.0 % of 2" in proc.stdout
    bare = write("bare.yaml", {})
    proc = run_cli("policy", "eval", run, "--reality", bare, "--episodes", 2)
    assert_one_line_error(proc, "bare.yaml: model:", "joint_names: {shoulder:", "upper_joint")


def test_the_dfki_urdf_steps_as_the_pendubot_with_its_identified_masses(real_data, tmp_path):
    """The DFKI authors' own URDF (their names, no actuators) as a world of the pendubot; its
    masses are their identified model 2.1's."""
    folder = real_data / "double-pendulum-dfki/identified/model_2.1"
    fitted = yaml.safe_load((folder / "model_parameters.yml").read_text())
    path = tmp_path / "dfki.yaml"
    doc = {"model": str(folder / "pendubot.urdf"), "joint_names": {"shoulder": "Joint1",
           "elbow": "Joint2"}, "body_names": {"link1": "Link1", "link2": "Link2"}}  # fmt: skip
    path.write_text(yaml.safe_dump(doc))
    env = reality_env(load_reality(path), ENV, {}, 1, seed=0)
    env.reset(seed=0)
    assert _value(env, "m1_kg") == pytest.approx(fitted["m1"])
    assert _value(env, "m2_kg") == pytest.approx(fitted["m2"])
    result = env.step(np.zeros((1, 1)))
    assert np.isfinite(result.reward).all()
