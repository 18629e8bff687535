"""Writing a trained network: TorchScript and ONNX files holding the whole function (scaling
and clip included) and the YAML beside them."""

from __future__ import annotations

import warnings
from pathlib import Path

from sim2real.actuators.config_io import save_actuator
from sim2real.actuators.network.config import NetConfig, expanded_scale
from sim2real.core.atomic import atomic_path


def _exported_module(mlp, cfg: NetConfig):
    """The whole function ``raw x (B, 2H) -> clipped tau (B,) N m`` as a torch module."""
    import torch

    class ActuatorNetModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = mlp
            self.register_buffer("input_scale", torch.tensor(expanded_scale(cfg)).float())
            self.register_buffer("torque_scale", torch.tensor(cfg.torque_scale_Nm).float())
            self.register_buffer("tau_max", torch.tensor(cfg.tau_max_Nm).float())

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            tau = self.layers(x / self.input_scale)[:, 0] * self.torque_scale
            return torch.clamp(tau, -self.tau_max, self.tau_max)

    return ActuatorNetModule().eval().requires_grad_(False)  # an inference function


def export_network(mlp, cfg: NetConfig, pt_path: str | Path) -> NetConfig:
    """Write ``pt_path`` (TorchScript) and the ONNX file beside it (same stem), atomically;
    returns ``cfg`` with ``weights`` = the TorchScript file's name (the YAML goes in the same
    folder)."""
    import torch

    pt_path = Path(pt_path)
    cfg = cfg.model_copy(update={"weights": pt_path.name})
    cfg._base_dir, cfg._cache = pt_path.parent, None
    module = _exported_module(mlp, cfg)
    example = torch.zeros(2, 2 * cfg.history)
    with atomic_path(pt_path) as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript is what we ship
        torch.jit.save(torch.jit.script(module), str(tmp))
    with atomic_path(pt_path.with_suffix(".onnx")) as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the legacy exporter's DeprecationWarning
        torch.onnx.export(
            module,
            (example,),
            str(tmp),
            input_names=["x"],
            output_names=["tau"],
            dynamic_axes={"x": {0: "batch"}, "tau": {0: "batch"}},
            dynamo=False,
        )
    return cfg


def save_network(trained, yaml_path: str | Path, extra: dict | None = None):
    """Write the network beside ``yaml_path`` (``<stem>.pt``, ``<stem>.onnx``) and the YAML
    (last, so a YAML always has its network); returns the config as loaded from there."""
    yaml_path = Path(yaml_path)
    cfg = export_network(trained.mlp, trained.config, yaml_path.with_suffix(".pt"))
    save_actuator(cfg, yaml_path, extra)
    return cfg.bound_to(yaml_path)
