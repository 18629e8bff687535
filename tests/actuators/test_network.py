"""The learned actuator network: a tiny hand-set network against hand computation (history
order, scaling, clipping), TorchScript = ONNX = numpy, history resampling, the input-size
check, inverse dynamics on a synthetic log of known torque, and a short training on real logs
judged in the bench simulation."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from cli_helpers import assert_one_line_error, run_cli

from sim2real.actuators import ActuatorState
from sim2real.actuators.bench import mae, simulate
from sim2real.actuators.inverse_dynamics import BENCH_MJCF, inverse_dynamics
from sim2real.actuators.models import load_actuator, save_actuator
from sim2real.actuators.network import NetConfig, export_network, make_mlp, train_network
from sim2real.actuators.run import replay_actuator
from sim2real.actuators.servo_log import ServoLog, read_servo_log
from sim2real.core.errors import InputError

torch = pytest.importorskip("torch")


def _save(tmp_path: Path, cfg: NetConfig, weights: list[tuple[list, list]]) -> Path:
    """Write a network with the given (W, b) per layer and its YAML; returns the YAML."""
    mlp = make_mlp(2 * cfg.history, cfg.hidden)
    linears = [m for m in mlp if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        for lin, (w, b) in zip(linears, weights, strict=True):
            lin.weight.copy_(torch.tensor(w))
            lin.bias.copy_(torch.tensor(b))
    cfg = export_network(mlp, cfg, tmp_path / "net.pt")
    save_actuator(cfg, tmp_path / "net.yaml")
    return tmp_path / "net.yaml"


TINY = NetConfig(
    weights="x.pt",
    history=2,
    dt_s=0.01,
    input_scale=[0.5, 2.0],
    torque_scale_Nm=0.3,
    hidden=[1],
    tau_max_Nm=0.25,
)
# inputs [e_old, e_new, v_old, v_new] weighted 1, 2, 4, 8: any other order gives another sum
TINY_WEIGHTS = [([[1.0, 2.0, 4.0, 8.0]], [0.1]), ([[2.0]], [-0.1])]


def _state(dt_s: float = 0.01, **kw) -> ActuatorState:
    return ActuatorState(dt_s=dt_s, **kw)


def test_tiny_network_by_hand(tmp_path):
    act = load_actuator(_save(tmp_path, TINY, TINY_WEIGHTS)).build()
    # first sample: e = 0.01, v = 0.02; the older slot repeats it
    x = act.observe(0.01, 0.0, 0.02, _state())
    assert x[0].tolist() == pytest.approx([0.01, 0.01, 0.02, 0.02])
    # second: e = 0.03, v = 0.04 -> x = [0.01, 0.03, 0.02, 0.04] (oldest first)
    tau = act.torque(0.03, 0.0, 0.04, _state())
    # scaled: [0.02, 0.06, 0.01, 0.02]; z = 0.02 + 0.12 + 0.04 + 0.16 + 0.1 = 0.44
    # softsign 0.44 / 1.44 = 0.305556; out = 2 * 0.305556 - 0.1 = 0.511111; x 0.3 N m
    assert tau == pytest.approx(0.153333, abs=1e-6)
    # (newest first would give z = 0.36 -> 0.3 * (2 * 0.36 / 1.36 - 0.1) = 0.128824)
    # large errors: 0.3 * (2 * ~1 - 0.1) ~ 0.57 N m clipped to +-0.25
    act.reset()
    assert act.torque(5.0, 0.0, 0.0, _state()) == pytest.approx(0.25)
    act.reset()
    assert act.torque(-5.0, 0.0, 0.0, _state()) == pytest.approx(-0.25)
    assert act.torque(0.03, 0.0, 0.04, _state(enabled=False)) == 0.0
    assert act.armature_kgm2 == 0.0


def test_vectorised_and_error_times_kp(tmp_path):
    yaml_path = _save(tmp_path, TINY.model_copy(update={"error_times_kp": True}), TINY_WEIGHTS)
    act = load_actuator(yaml_path).build()
    state = _state(kp_fw=np.array([1.0, 10.0]))
    x = act.observe(np.array([0.01, 0.01]), np.zeros((3, 2)), 0.5, state)
    assert x.shape == (6, 4)  # broadcast (3, 2) flattened, 2 H inputs
    assert x[:2, 0].tolist() == pytest.approx([0.01, 0.1]) and np.all(x[:, 2:] == 0.5)
    assert act.torque(np.array([0.01, 0.01]), np.zeros((3, 2)), 0.5, state).shape == (3, 2)


def test_motor_voltage_input(tmp_path):
    """The firmware law in front: clip(0.003 x kp x error, +-0.9) x vin volts."""
    law = {"motor_voltage": True, "error_gain_duty_rad": 0.003, "max_pwm": 0.9}
    act = load_actuator(_save(tmp_path, TINY.model_copy(update=law), TINY_WEIGHTS)).build()
    state = _state(kp_fw=np.array([400.0, 400.0]), vin_V=7.0)
    x = act.observe(np.array([0.5, -2.0]), 0.0, 0.1, state)
    # duty 0.003 * 400 * 0.5 = 0.6 -> 4.2 V; -2.4 clipped to -0.9 -> -6.3 V
    assert x[:, 1].tolist() == pytest.approx([4.2, -6.3])
    with pytest.raises(ValueError, match="exclude each other"):
        NetConfig.model_validate(TINY.model_dump() | law | {"error_times_kp": True})


def test_reset_rows_restarts_one_environments_history(tmp_path):
    act = load_actuator(_save(tmp_path, TINY, TINY_WEIGHTS)).build()
    act.observe(np.array([0.01, 0.02]), 0.0, np.array([0.1, 0.2]), _state())
    act.reset_rows([1])  # environment 1 starts a new episode
    x = act.observe(np.array([0.03, 0.04]), 0.0, np.array([0.3, 0.4]), _state())
    assert x[0].tolist() == pytest.approx([0.01, 0.03, 0.1, 0.3])  # kept its history
    assert x[1].tolist() == pytest.approx([0.04, 0.04, 0.4, 0.4])  # refilled by its first


def test_resampled_history_warns_once(tmp_path):
    cfg = TINY.model_copy(update={"history": 3, "hidden": [2]})
    weights = [(np.ones((2, 6)).tolist(), [0.0, 0.0]), ([[1.0, 1.0]], [0.0])]
    act = load_actuator(_save(tmp_path, cfg, weights)).build()
    # loop at 4 ms, trained at 10 ms: inputs at lags 5, 2.5 and 0 loop steps
    with pytest.warns(UserWarning, match="resampled") as record:
        for k in range(8):
            x = act.observe(0.001 * k, 0.0, -0.002 * k, _state(0.004))
    assert len(record) == 1
    assert x[0].tolist() == pytest.approx([0.002, 0.0045, 0.007, -0.004, -0.009, -0.014])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # at the trained step: no warning
        act2 = load_actuator(tmp_path / "net.yaml").build()
        x = act2.observe(0.0, 0.0, 0.0, _state(0.01))


def test_torchscript_onnx_numpy_agree(tmp_path):
    import onnxruntime as ort

    torch.manual_seed(1)
    mlp = make_mlp(6, [8, 8])
    cfg = TINY.model_copy(update={"history": 3, "hidden": [8, 8], "tau_max_Nm": 0.04})
    cfg = export_network(mlp, cfg, tmp_path / "net.pt")
    save_actuator(cfg, tmp_path / "net.yaml")
    net = load_actuator(tmp_path / "net.yaml").network()
    x = np.random.default_rng(0).normal(0, [0.5, 0.5, 0.5, 2, 2, 2], (200, 6)) * 3
    ours = net(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        script = torch.jit.load(str(tmp_path / "net.pt"))(torch.tensor(x, dtype=torch.float32))
    sess = ort.InferenceSession(str(tmp_path / "net.onnx"), providers=["CPUExecutionProvider"])
    (onnx,) = sess.run(["tau"], {"x": x.astype(np.float32)})
    clipped = np.abs(ours) == 0.04
    assert clipped.any() and not clipped.all()  # both sides of the clip compared
    assert np.abs(script.numpy() - ours).max() < 1e-6
    assert np.abs(onnx - ours).max() < 1e-6


@pytest.mark.slow  # the CLI in a fresh interpreter loads torch
def test_input_size_mismatch(tmp_path):
    yaml_path = _save(tmp_path, TINY, TINY_WEIGHTS)  # 4 inputs
    doc = yaml.safe_load(yaml_path.read_text())
    doc["actuator"]["history"] = 3
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(doc))
    with pytest.raises(InputError) as err:
        load_actuator(bad)
    assert (err.value.source, err.value.field) == (str(bad), "actuator.history")
    assert "network net.pt takes 4 inputs; history 3 needs 6" in err.value.message
    log = tmp_path / "log.json"
    entries = [
        {"timestamp": 0.01 * i, "goal_position": 0.0, "position": 0.0, "torque_enable": True}
        for i in range(20)
    ]
    log.write_text(json.dumps({"mass": 0.49, "length": 0.1, "kp": 200, "vin": 7.4} | {
        "entries": entries
    }))  # fmt: skip
    out = tmp_path / "pred.csv"
    proc = run_cli("actuator", "replay", bad, "--log", log, "--out", out)
    assert_one_line_error(proc, str(bad), "actuator.history", "net.pt")
    assert not out.exists()
    (tmp_path / "net.pt").unlink()
    with pytest.raises(InputError) as err:
        load_actuator(yaml_path)
    assert (err.value.source, err.value.field) == (str(yaml_path), "actuator.weights")


def test_weights_relative_to_yaml(tmp_path, monkeypatch):
    yaml_path = _save(tmp_path / "a", TINY, TINY_WEIGHTS)
    monkeypatch.chdir(tmp_path)  # elsewhere: still found beside the YAML
    cfg = load_actuator(yaml_path)
    assert cfg.weights == "net.pt" and cfg.weights_path() == yaml_path.parent / "net.pt"
    assert load_actuator(yaml_path) == cfg


def test_inverse_dynamics_recovers_known_torque():
    import mujoco

    # an independent simulation: the bench MJCF stepped by MuJoCo under a known joint torque
    model = mujoco.MjModel.from_xml_path(str(BENCH_MJCF))
    model.dof_damping[:] = model.dof_frictionloss[:] = 0.0
    model.actuator_gainprm[:] = model.actuator_biasprm[:] = 0.0
    model.opt.timestep = 0.005
    data = mujoco.MjData(model)
    t = np.arange(1200) * 0.005
    tau = 0.15 * np.sin(2 * np.pi * 0.8 * t) + 0.08 * np.sin(2 * np.pi * 2.3 * t + 0.5)
    q = np.empty_like(t)
    for k in range(len(t)):
        q[k] = data.qpos[0]
        data.qfrc_applied[0] = tau[k]
        mujoco.mj_step(model, data)
    log = ServoLog(Path("synthetic.json"), 0.49, 0.1, 200.0, 7.4, t, q, q, np.gradient(q, t),
                   np.ones(len(t), bool))  # fmt: skip
    est = inverse_dynamics(log).tau_Nm
    inner = slice(20, -20)  # away from the filter's ends
    # the filter's bias (it flattens the 2.3 Hz peaks a little) stays under 2 % of the
    # 0.23 N m amplitude (measured 0.0022 N m at most)
    assert np.abs(est[inner] - tau[inner]).max() < 0.004
    assert 0.5 < np.abs(q).max() < 1.5  # swings far enough for gravity to matter, no full turn


class _ZeroTorque:
    """A baseline: the servo gives no torque (same armature as the network)."""

    def __init__(self, armature_kgm2: float):
        self.armature_kgm2 = armature_kgm2

    def values(self) -> dict:
        return {"armature_kgm2": self.armature_kgm2}

    def build(self, values: dict):
        class Off:
            def torque(self, command, q, qd, state):
                return np.zeros(np.broadcast_shapes(np.shape(command), np.shape(q)))

        return Off()


@pytest.mark.slow
def test_short_training_beats_zero_torque(real_data, tmp_path):
    folder = real_data / "servo-bam-xl330" / "processed"
    paths = sorted(folder.glob("*.json"))
    logs = [read_servo_log(paths[i]) for i in (4, 6)]  # sin_sin and up_and_down at kp 200
    trained = train_network(logs, hidden=(16, 16), iterations=300, error_times_kp=True)
    assert trained.torque_rmse_Nm < 0.5 * trained.target_std_Nm
    net = mae(simulate(trained.config, logs), logs)[0]
    zero = mae(simulate(_ZeroTorque(trained.config.armature_kgm2), logs), logs)[0]
    assert np.isfinite(net) and net < 0.5 * zero


@pytest.mark.slow
def test_cli_fit_and_replay_net(real_data, tmp_path):
    folder = real_data / "servo-bam-xl330" / "processed"
    logs = sorted(folder.glob("*.json"))
    a200, a400 = logs[4], logs[8]  # sin_sin at kp 200 and 400
    act = tmp_path / "net.yaml"
    proc = run_cli(
        "actuator", "fit", "--logs", a200, a400, "--model", "net-kp", "--holdout-kp", "400",
        "--restarts", "0", "--out", act,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "hold-out MAE" in proc.stdout and "network trained on" in proc.stdout
    assert {p.name for p in tmp_path.iterdir()} == {"net.yaml", "net.pt", "net.onnx"}
    record = yaml.safe_load(act.read_text())["fit"]
    assert np.isfinite(record["train_mae_rad"]) and np.isfinite(record["holdout_mae_rad"])
    pred = tmp_path / "pred.csv"  # in-process: the replay verb is a thin shell over this
    replay = replay_actuator(act, a400)
    replay.write_csv(pred)
    assert replay.mae_rad == pytest.approx(record["holdout_mae_rad"])  # one hold-out log
    assert len(pred.read_text().splitlines()) == 1 + len(read_servo_log(a400).t_s)


def test_runs_in_the_mujoco_loop_resampled(tmp_path):
    import mujoco

    from sim2real.actuators.mujoco_loop import MujocoActuatorLoop

    # a stiff P term on the newest error (weight 8 on e[k]) holding the arm near 0.3 rad
    cfg = TINY.model_copy(update={"dt_s": 0.005, "tau_max_Nm": 0.7, "armature_kgm2": 0.002})
    act = load_actuator(_save(tmp_path, cfg, [([[0.0, 8.0, 0.0, -1.0]], [0.0]), ([[3.0]], [0.0])]))
    model = mujoco.MjModel.from_xml_path(str(BENCH_MJCF))  # steps of 2 ms
    loop = MujocoActuatorLoop(model, mujoco.MjData(model), "horn", act.build(), 200.0, 7.4)
    loop.attach()
    assert model.dof_armature[loop.dof] == 0.002
    with pytest.warns(UserWarning, match="resampled") as record:
        taus = [loop.step(0.3) for _ in range(1500)]
    assert len(record) == 1 and np.all(np.isfinite(taus))
    assert 0.0 < loop.data.qpos[0] < 0.3  # pulled towards the command, sagging under gravity
