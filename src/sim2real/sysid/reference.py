"""The published models of the real data sets, written into the built-in MJCF with the wrapper's
exact extra terms, to be simulated the same way as a fit (baselines of the benchmark).

- pendulum-dfki: tau = J qdd + m cx g sin q + Fv qd + Fc atan(100 qd) + offset
  (``pd/system_identification/system_identification.txt``). The atan term is the extra smooth
  Coulomb torque with Fc pi / 2 and v_s = 0.01 rad/s, MuJoCo's frictionloss is off.
- double-pendulum-dfki: ``identified/model_<v>/model_parameters.yml`` (their plant: masses
  m1, m2 at r1, r2, inertias I1, I2 about the joint axes, rotor inertia Ir with gear ratio gr,
  viscous b, Coulomb cf atan(100 qd)). Rotor inertia enters as armature gr^2 Ir on each joint;
  their small cross terms (Ir on joint 1, -gr Ir coupling, about 2 % of I2) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim2real.core.yaml_io import read_yaml_mapping
from sim2real.params.space import Param, ParamSpace
from sim2real.sim.builtin import BUILTINS
from sim2real.sim.model import SimModel, load_sim_model

PENDULUM_PUBLISHED = {"J": 0.06259, "mcx": 0.1022, "Fv": 0.04707, "Fc": 0.1839, "offset": -0.07586}


def _space(items: list[tuple[str, str, float]]) -> ParamSpace:
    return ParamSpace(
        params=[
            Param(name=n, target=t, nominal=v, bounds=(min(v, 0.0) - 1.0, max(v, 0.0) + 1.0))
            for n, t, v in items
        ]
    )


def pendulum_published() -> tuple[SimModel, ParamSpace, np.ndarray]:
    p = PENDULUM_PUBLISHED
    arm = p["J"] / p["mcx"]
    items = [
        ("mass", "body.mass:pendulum", p["mcx"] / arm),
        ("com_z", "body.com_z:pendulum", -arm),
        ("damping", "joint.damping:shoulder", p["Fv"]),
        ("frictionloss", "joint.frictionloss:shoulder", 0.0),
        ("coulomb", "extra.coulomb:shoulder", p["Fc"] * np.pi / 2),
        ("bias", "actuator.bias:shoulder", -p["offset"]),
    ]
    space = _space(items)
    return load_sim_model(BUILTINS["pendulum-dfki"].mjcf), space, space.nominal()


def double_pendulum_published(params_yml: Path) -> tuple[SimModel, ParamSpace, np.ndarray]:
    p = read_yaml_mapping(params_yml, "model parameters")
    items = []
    for k, (link, joint) in enumerate((("link1", "shoulder"), ("link2", "elbow")), start=1):
        m, r, inertia = p[f"m{k}"], p[f"r{k}"], p[f"I{k}"]
        items += [
            (f"m{k}", f"body.mass:{link}", m),
            (f"r{k}", f"body.com_z:{link}", -r),
            (f"I{k}", f"body.inertia:{link}", max(inertia - m * r * r, 1e-6)),
            (f"b{k}", f"joint.damping:{joint}", p[f"b{k}"]),
            (f"fl{k}", f"joint.frictionloss:{joint}", 0.0),
            (f"cf{k}", f"extra.coulomb:{joint}", p[f"cf{k}"] * np.pi / 2),
            (f"arm{k}", f"joint.armature:{joint}", p["gr"] ** 2 * p["Ir"]),
        ]
    items.append(("l1", "option.gravity", p["g"]))
    space = _space(items)
    return load_sim_model(BUILTINS["double-pendulum-dfki"].mjcf), space, space.nominal()


@dataclass
class Reference:
    """A published model to compare with: simulate ``sim`` with ``values`` of ``space``."""

    label: str
    sim: SimModel
    space: ParamSpace
    values: np.ndarray


def reference_for(builtin_name: str) -> Reference | None:
    """The published model of a built-in's data set (None when unknown or its data is absent)."""
    from sim2real.core.data import real_data
    from sim2real.core.errors import InputError

    if builtin_name == "pendulum-dfki":
        return Reference("published fit (system_identification.txt)", *pendulum_published())
    if builtin_name == "double-pendulum-dfki":
        try:
            yml = real_data(
                "double-pendulum-dfki", "identified", "model_2.0", "model_parameters.yml"
            )
        except InputError:
            return None
        return Reference("published model_2.0", *double_pendulum_published(yml))
    return None
