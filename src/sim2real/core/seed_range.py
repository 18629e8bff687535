"""The seeds every command takes: 0 to ``MAX_SEED``."""

MAX_SEED = 2**32 - 1
"""numpy's global seed (``np.random.seed``, which training sets) is 32 bits."""
