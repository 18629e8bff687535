"""Learners from the field on :class:`sim2real.learn.vec.VecEnv`: an adapter to rsl_rl's
``VecEnv`` (:mod:`.rsl_env`, TensorDict observation groups), rsl_rl's PPO (:mod:`.rsl_ppo`)
driven one iteration at a time, and the running statistics the learners share
(:mod:`.normalize`).

Every learner here has the same small surface: ``iterate()`` runs one collect-and-update
iteration and returns its metrics, ``policy()`` the deterministic observation-to-action map
(normalization inside, actions in [-1, 1]), ``get_state()`` / ``set_state()`` everything needed
to continue exactly."""
