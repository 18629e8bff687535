"""Column mapping of a robot log (CSV or JSON): which column is the time, which are the
measured position and velocity of which joint, and which drive which actuator. Never assume
column order. YAML form::

    time: time                 # column of the timestamps, or two: [stamp.sec, stamp.nanosec]
    time_scale_s: 1.0          # seconds per time unit (0.001 for milliseconds; one column only)
    records: entries           # JSON only: key of the per-sample records (or columns)
    joints:
      shoulder: {position: position, velocity: velocity}
    actuators:
      shoulder: {column: torque}                 # ctrl of actuator 'shoulder' [N m]
      # {column: goal_position, multiply_by: torque_enable, scale: 1.0, despike: false}
    valid_if: torque_enable    # optional: segments only where this column is non-zero
    position_unit: rad         # or deg (converted)
    time_order: strict         # out-of-order or repeated times are an error; or sort (sort them,
                               # drop duplicated times, say so)
    bad_rows: error            # rows with NaN or non-numbers are an error; or drop (say so)
    command_resample: linear   # linear or zoh (hold) when resampling the commands
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from sim2real.core.errors import InputError
from sim2real.core.strict import StrictModel, validate
from sim2real.core.yaml_io import read_yaml


class JointColumns(StrictModel):
    """Measured signals of one joint: position [rad or m] and, optionally, velocity
    [rad/s or m/s] (differentiated from the position when absent)."""

    position: str = Field(..., description="column of the joint's measured position")
    velocity: str | None = Field(
        None, description="column of its measured velocity (None: differentiated from the position)"
    )
    sign: float = Field(1.0, description="multiply position and velocity by this (+1 or -1)")


class ActuatorColumn(StrictModel):
    """The column that drives an actuator's ``ctrl`` (a torque in N m for torque actuators,
    a goal position for position servos), times ``scale``, times ``multiply_by``'s column."""

    column: str = Field(..., description="the log column that drives the actuator's ctrl")
    scale: float = Field(1.0, description="ctrl = column x scale (x multiply_by)")
    multiply_by: str | None = Field(
        None, description="another column the value is multiplied by (e.g. torque_enable)"
    )
    despike: bool = Field(
        False,
        description="replace isolated spikes (Hampel filter: more than 4 robust sigmas from "
        "the median of the 15 samples around) by that median",
    )


class LogMapping(StrictModel):
    """See the module docstring."""

    time: str | list[str] = Field(
        "time",
        description="column of the timestamps, or two columns [seconds, nanoseconds] (a ROS 2 "
        "stamp: time = sec + nanosec x 1e-9); without a 'time' column in the log, a pair "
        "<prefix>sec, <prefix>nanosec is found",
    )
    time_scale_s: float = Field(
        1.0, gt=0, description="seconds per time unit (0.001 for milliseconds; one column only)"
    )
    records: str | None = Field(
        None, description="JSON only: the key of the per-sample records (or columns)"
    )
    joints: dict[str, JointColumns] = Field(..., description="measured signals per joint name")
    actuators: dict[str, ActuatorColumn] = Field(
        default_factory=dict, description="the column driving each actuator, by name"
    )
    valid_if: str | None = Field(
        None,
        description="column that is non-zero where the samples may be simulated (e.g. a "
        "servo's torque_enable); segments skip the rest",
    )
    position_unit: Literal["rad", "deg"] = Field("rad", description="rad or deg (converted to rad)")
    time_order: Literal["sort", "strict"] = Field(
        "strict",
        description="strict: out-of-order or repeated times are an error; sort: sort the rows "
        "and keep the first of each repeated time (reported)",
    )
    bad_rows: Literal["error", "drop"] = Field(
        "error",
        description="rows with NaN or a non-number in a mapped column: an error naming the "
        "first, or dropped (reported)",
    )
    command_resample: Literal["linear", "zoh"] = Field(
        "linear", description="linear, or zoh (hold) when the commands are resampled"
    )
    max_gap_s: float | None = Field(
        None, gt=0, description="longer sample intervals are gaps (default 5 x the median)"
    )

    @field_validator("time")
    @classmethod
    def _one_or_two_columns(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, list) and len(value) != 2:
            raise ValueError("one column, or two: [seconds, nanoseconds]")
        return value

    @model_validator(mode="after")
    def _no_scale_of_a_pair(self) -> LogMapping:
        if isinstance(self.time, list) and self.time_scale_s != 1.0:
            raise ValueError("time_scale_s applies to one time column, not [seconds, nanoseconds]")
        return self

    def time_columns(self) -> list[str]:
        """The time column, or the [seconds, nanoseconds] pair."""
        return [self.time] if isinstance(self.time, str) else list(self.time)

    def columns(self) -> dict[str, str]:
        """Every mapped column -> where it is mapped (for error messages)."""
        out = {c: "time" for c in self.time_columns()}
        for j, c in self.joints.items():
            out[c.position] = f"joints.{j}.position"
            if c.velocity:
                out[c.velocity] = f"joints.{j}.velocity"
        if self.valid_if:
            out[self.valid_if] = "valid_if"
        for a, c in self.actuators.items():
            out[c.column] = f"actuators.{a}.column"
            if c.multiply_by:
                out[c.multiply_by] = f"actuators.{a}.multiply_by"
        return out


def load_mapping(path: str | Path) -> LogMapping:
    """Read and validate a column-mapping YAML; problems become ``InputError``."""
    path = Path(path)
    return mapping_from_dict(read_yaml(path, "column mapping"), path)


def mapping_from_dict(data: object, source: str | Path) -> LogMapping:
    if not isinstance(data, dict):
        raise InputError(source, None, "expected a mapping with 'time', 'joints', 'actuators'")
    return validate(LogMapping, data, source)
