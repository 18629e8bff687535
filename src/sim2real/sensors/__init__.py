"""Depth sensors: rendering, noise profiles, presets (calibration and gap come later)."""
