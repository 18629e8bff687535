"""The training budget of ``detect train``: steps by default (the same training on an idle and
a busy machine), minutes as a cap, both overridable from the command line."""

from sim2real.detect.train import TrainConfig, resolve_train_config


def test_the_default_budget_is_steps_capped_by_minutes():
    optim = TrainConfig().optim
    assert optim.max_steps == 10_000 and optim.max_minutes == 17.0


def test_steps_and_minutes_from_the_command_line_override_the_config():
    cfg = resolve_train_config(None, steps=120, minutes=3.5, seed=4)
    assert cfg.optim.max_steps == 120 and cfg.optim.max_minutes == 3.5 and cfg.seed == 4
    assert cfg.optim.batch_size == TrainConfig().optim.batch_size  # the rest untouched
    only_minutes = resolve_train_config(None, minutes=2.0).optim
    assert only_minutes.max_steps == 10_000 and only_minutes.max_minutes == 2.0


def test_the_budget_spent_is_steps_or_minutes_whichever_leads():
    optim = TrainConfig().optim  # 10,000 steps, 17 min
    assert optim.spent(60.0, 5_000) == 0.5  # steps lead
    assert optim.spent(0.75 * 17 * 60, 5_000) == 0.75  # minutes lead
    assert optim.model_copy(update={"max_steps": None}).spent(8.5 * 60, 10**6) == 0.5


def test_a_training_cut_short_by_the_minutes_cap_says_so():
    optim = TrainConfig().optim  # 10,000 steps, 17 min
    assert optim.cut_short(10_000) is None
    notice = optim.cut_short(2_169)
    assert "17-minute cap after 2,169 of 10,000 steps" in notice and "--minutes" in notice
    assert optim.model_copy(update={"max_steps": None}).cut_short(5) is None  # time only
