"""sim2real: simulate, calibrate, randomize and measure the gap, for depth sensors and robots."""

__version__ = "0.1.0"
