"""RealSense sources for the tracker: recordings (``.bag`` / ``.db3``) played with the SDK,
and a connected camera. ``pyrealsense2`` is imported only when one is opened."""

from sim2real.tracking.realsense.live import LiveCamera, open_live_camera
from sim2real.tracking.realsense.recording import RECORDING_SUFFIXES, RealSenseRecording

__all__ = ["RECORDING_SUFFIXES", "LiveCamera", "RealSenseRecording", "open_live_camera"]
