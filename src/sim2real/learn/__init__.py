"""Policies that survive reality: batched environments on the MuJoCo wrapper (``envs``),
domain randomization as data (``randomization``), PPO (``ppo``, ``train``), teacher-student
distillation (``distill``), export and the robot-side runner (``export``, ``deploy``), and
transfer evaluation across realities (``reality``, ``evaluate``, ``report``). The contract
between them is :mod:`sim2real.learn.vec`."""
