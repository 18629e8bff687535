"""The fast PNG encoder: what it writes, Pillow reads back bit for bit."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from sim2real.core.png_encode import encode_png


def _read(data: bytes) -> tuple[np.ndarray, str]:
    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im), im.mode


@pytest.mark.parametrize(
    ("shape", "dtype", "mode"),
    [((37, 53, 3), np.uint8, "RGB"), ((37, 53), np.uint8, "L"), ((37, 53), np.uint16, "I;16")],
)
@pytest.mark.parametrize("level", [0, 1, 9])
def test_pillow_reads_back_what_was_written(shape, dtype, mode, level):
    rng = np.random.default_rng(3)
    image = rng.integers(0, np.iinfo(dtype).max, shape, dtype=dtype, endpoint=True)
    image[0, 0], image[-1, -1] = 0, np.iinfo(dtype).max  # the extremes survive the filter
    back, got_mode = _read(encode_png(image, level))
    assert got_mode == mode
    np.testing.assert_array_equal(back, image)


def test_16_bit_colour_is_valid_png_read_by_pillow_as_its_high_bytes():
    # Pillow reads 48-bit RGB as 8-bit: the high bytes show the byte order and filter right
    image = np.random.default_rng(5).integers(0, 65535, (9, 11, 3), dtype=np.uint16)
    back, mode = _read(encode_png(image))
    assert mode == "RGB"
    np.testing.assert_array_equal(back, (image >> 8).astype(np.uint8))


def test_a_view_with_strides_is_written_as_its_values():
    rng = np.random.default_rng(4)
    big = rng.integers(0, 65535, (40, 60), dtype=np.uint16)
    view = big[::2, 1::3]
    np.testing.assert_array_equal(_read(encode_png(view))[0], view)


def test_smooth_images_compress():
    ramp = np.tile(np.arange(320, dtype=np.uint16) * 100, (240, 1))
    assert len(encode_png(ramp)) < ramp.nbytes / 20


@pytest.mark.parametrize(
    "image",
    [
        np.zeros((4, 4), np.float32),
        np.zeros((4, 4, 4), np.uint8),
        np.zeros((0, 4), np.uint8),
        np.zeros(4, np.uint8),
    ],
)
def test_what_png_cannot_hold_is_refused(image):
    with pytest.raises(ValueError, match="PNG"):
        encode_png(image)
