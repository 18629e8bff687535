# Two commands: `make demo` and `make test`. Each sets up .venv (and the system libraries
# Open3D needs) when missing, then runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint format bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/ensure_system_libs.sh
	bash scripts/ensure_system_libs.sh
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,cluster]'  # cluster: the Ray tests run too
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/sim2real demo

# pytest in two processes (the machine's cores); a module's tests stay in one, so a module's
# fixtures (its Ray instance) start once; the ten slowest tests listed at the end
test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/python -m pytest -q -n 2 --dist loadscope --durations=10

format: $(STAMP)
	$(BIN)/ruff format src tests benchmarks
	$(BIN)/ruff check --fix src tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_depth.py
	$(BIN)/python benchmarks/bench_calibrate.py
	$(BIN)/python benchmarks/bench_calibration_gap.py
	$(BIN)/python benchmarks/bench_tracking.py
	$(BIN)/python benchmarks/bench_sequences.py
	$(BIN)/python benchmarks/bench_m3t.py
	$(BIN)/python benchmarks/bench_model.py
	$(BIN)/python benchmarks/bench_rollout.py
	$(BIN)/python benchmarks/bench_sysid.py
	$(BIN)/python benchmarks/bench_env.py
	$(BIN)/python benchmarks/bench_train.py
	$(BIN)/python benchmarks/bench_ray.py

clean:
	rm -rf $(VENV) runs build *.egg-info src/*.egg-info
