"""A policy of one task used with another task's id or worlds: one line, exit 2."""

from cli_helpers import assert_one_line_error, run_cli

from sim2real.learn.train import TrainConfig, train


def test_a_pendulum_policy_on_pendubot_inputs_is_refused(tmp_path):
    run = tmp_path / "run"
    cfg = TrainConfig(total_env_steps=8 * 16, num_envs=8, steps_per_env=16)
    train(run, "sim2real/PendulumSwingup-v0", train_config=cfg, quiet=True)
    wrong_env = run_cli("policy", "eval", str(run), "--env", "sim2real/PendubotSwingup-v0")
    assert_one_line_error(wrong_env, "env_id", "PendulumSwingup")
    wrong_world = run_cli("policy", "eval", str(run), "--reality", "pendubot-our-fit")
    assert_one_line_error(wrong_world, "pendubot-our-fit.yaml", "model", "not a model of")
    # a world of a task whose model is its own file (the cart-pole's): was "--model: cartpole"
    bundled = run_cli("policy", "eval", str(run), "--reality", "cartpole-heavy-laggy")
    assert_one_line_error(bundled, "cartpole-heavy-laggy.yaml: model: cartpole: neither")
    report = tmp_path / "report"
    again = run_cli("policy", "eval", str(run), "--realaigym", "--reality", "pendubot-our-fit")
    assert_one_line_error(again, "pendubot-our-fit.yaml", "not a model of")
    assert not report.exists()
