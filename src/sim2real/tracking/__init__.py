"""Model-based part tracking: sequences, symmetries, synthetic data and evaluation."""
