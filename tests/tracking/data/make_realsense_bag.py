"""Write the ROS 1 ``.bag`` fixtures of ``tests/tracking/test_realsense.py`` (gzipped beside
this script). SDK 2.58 and later record only ROS 2 ``.db3`` files, so these are written once
under the last SDK that writes ``.bag``, through a software device and ``rs.recorder``::

    python -m venv /tmp/rs257 && /tmp/rs257/bin/pip install pyrealsense2==2.57.7.10387 numpy
    /tmp/rs257/bin/python tests/tracking/data/make_realsense_bag.py

Depth: 24x16 px, fx = fy = 30, (cx, cy) = (11.5, 7.5), 1e-4 m per unit, frame numbers 5, 6, 7,
value 4000 + 1000 i + u units. Colour: the same intrinsics, rgb8, (10 u, 10 v, 50 i); the
colour camera 1 cm to the right of depth's (depth -> colour translation (0.01, 0, 0)).
"""

import gzip
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pyrealsense2 as rs

W, H, HERE = 24, 16, Path(__file__).parent


def stream(kind, uid, fmt, bpp):
    intr = rs.intrinsics()
    intr.width, intr.height, intr.fx, intr.fy, intr.ppx, intr.ppy = W, H, 30.0, 30.0, 11.5, 7.5
    intr.model, intr.coeffs = rs.distortion.none, [0.0] * 5
    vs = rs.video_stream()
    vs.type, vs.index, vs.uid, vs.width, vs.height, vs.fps, vs.bpp, vs.fmt = (
        kind,
        0,
        uid,
        W,
        H,
        30,
        bpp,
        fmt,
    )
    vs.intrinsics = intr
    return vs


def write(path: Path, with_depth: bool) -> None:
    sd = rs.software_device()
    sensors = []
    v, u = np.mgrid[0:H, 0:W]
    if with_depth:
        ds = sd.add_sensor("Depth")
        ds.add_read_only_option(rs.option.depth_units, 1e-4)
        dp = ds.add_video_stream(stream(rs.stream.depth, 0, rs.format.z16, 2))
        images = [(4000 + 1000 * i + u).astype(np.uint16) for i in range(3)]
        sensors.append((ds, dp.as_video_stream_profile(), images, 2))
    cs = sd.add_sensor("Color")
    cp = cs.add_video_stream(stream(rs.stream.color, 1, rs.format.rgb8, 3))
    images = [
        np.stack([10 * u, 10 * v, np.full_like(u, 50 * i)], 2).astype(np.uint8) for i in range(3)
    ]
    sensors.append((cs, cp.as_video_stream_profile(), images, 3))
    if with_depth:
        extr = rs.extrinsics()
        extr.rotation, extr.translation = [1, 0, 0, 0, 1, 0, 0, 0, 1], [0.01, 0.0, 0.0]
        dp.register_extrinsics_to(cp, extr)
    recorder = rs.recorder(str(path), sd)
    for s, p, _, _ in sensors:
        s.open(p)
        s.start(lambda f: None)
    for i in range(3):
        for s, p, images, bpp in sensors:
            f = rs.software_video_frame()
            f.pixels, f.bpp, f.stride = images[i], bpp, W * bpp
            f.timestamp, f.frame_number = 1000.0 + 33.3 * i, 5 + i
            f.domain, f.profile = rs.timestamp_domain.hardware_clock, p
            s.on_video_frame(f)
    for s, _, _, _ in sensors:
        s.stop()
        s.close()
    recorder.pause()
    del recorder


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        for name, with_depth in (("sdk257.bag", True), ("sdk257_colour_only.bag", False)):
            bag = Path(tmp) / name
            write(bag, with_depth)
            gz = HERE / f"{name}.gz"
            with (
                open(bag, "rb") as src,
                open(gz, "wb") as out,
                gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as dst,
            ):
                shutil.copyfileobj(src, dst)
            print(
                name, bag.stat().st_size, "bytes,", (HERE / f"{name}.gz").stat().st_size, "gzipped"
            )
