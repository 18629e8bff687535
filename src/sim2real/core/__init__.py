"""Core types shared by every stage: poses, cameras, file IO, errors, reports."""

from sim2real.core.errors import InputError

__all__ = ["InputError"]
