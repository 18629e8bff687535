"""A learned actuator network in the style of Hwangbo et al. 2019 (ANYmal): an MLP with
softsign activations over the last ``history`` samples of position error ``command - q`` and
joint velocity ``qd``, predicting the joint torque.

Input layout, oldest sample first (``e`` the position error, ``v`` the velocity, ``k`` now,
one sample every ``dt_s``)::

    x = [e[k-H+1], ..., e[k-1], e[k],  v[k-H+1], ..., v[k-1], v[k]]        (2 H,)
    tau = clip(torque_scale_Nm * mlp(x / input_scale), -tau_max_Nm, tau_max_Nm)

with ``input_scale = [scale_e] * H + [scale_v] * H``. The exported files (TorchScript ``.pt``,
the config's ``weights``, and ONNX ``.onnx`` beside it: input ``x`` ``(B, 2H)`` float32, output
``tau`` ``(B,)`` N m) hold that whole function, scaling and clipping included, so a deployment
needs no YAML. The runtime :class:`ActuatorNet` evaluates the same MLP in numpy (a per-step
call into torch for a few samples costs far more than the arithmetic).

Training (:func:`train_network`): targets from the bench's inverse dynamics
(:mod:`sim2real.actuators.inverse_dynamics`), inputs from the same filtered motion; the network
is then judged like the physical models, by simulating the bench with it in the loop.

The network runs at the rate it was trained for (``dt_s``). In a loop with another step, its
history is resampled: the stored samples are interpolated at multiples of ``dt_s`` back from
now (one warning per runtime object).

Gain-aware inputs: ``error_times_kp`` feeds ``kp_fw * e`` instead of ``e``; ``motor_voltage``
puts the firmware's proportional law in front of the network and feeds the motor voltage
``clip(error_gain_duty_rad * kp_fw * e, +-max_pwm) * vin`` [V]: bounded whatever the gain, so
a gain outside the training range gives inputs inside it.

Package layout: ``config`` (the YAML's configuration, the weights read and checked),
``runtime`` (:class:`ActuatorNet`), ``train`` (:func:`train_network`), ``export`` (TorchScript,
ONNX, YAML). Nothing here imports :mod:`sim2real.actuators.models` (which imports the config
for its union); torch only inside the functions that need it.
"""

from sim2real.actuators.network.config import (
    NetConfig,
    NetWeights,
    expanded_scale,
    read_network,
    weights_from_state,
)
from sim2real.actuators.network.export import export_network, save_network
from sim2real.actuators.network.runtime import ActuatorNet, error_feature
from sim2real.actuators.network.train import (
    TrainedNet,
    make_mlp,
    train_network,
    training_samples,
)

__all__ = [
    "ActuatorNet",
    "NetConfig",
    "NetWeights",
    "TrainedNet",
    "error_feature",
    "expanded_scale",
    "export_network",
    "make_mlp",
    "read_network",
    "save_network",
    "train_network",
    "training_samples",
    "weights_from_state",
]
