"""Learners from the field on :class:`sim2real.learn.vec.VecEnv`: adapters to rsl_rl's
``VecEnv`` (:mod:`.rsl_env`, TensorDict observation groups) and to Stable-Baselines3's
(:mod:`.sb3_env`), rsl_rl's PPO (:mod:`.rsl_ppo`) and SB3's SAC (:mod:`.sac`) driven one
iteration at a time, and the running statistics they share (:mod:`.normalize`).

Every learner here has the same small surface: ``iterate()`` runs one collect-and-update
iteration and returns its metrics, ``policy()`` the deterministic observation-to-action map
(normalization inside, actions in [-1, 1]), ``get_state()`` / ``set_state()`` everything
needed to continue exactly."""
