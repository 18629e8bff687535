"""Procedural textures: a bank of square RGB arrays (smooth value noise, checkers, stripes,
linear gradients, flat colours) generated from a seed, and triplanar lookup by hit point."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError
from sim2real.detect.scene_config import IMAGE_SUFFIXES, TextureTerm

FLAT_GREY = 0.2
"""Linear albedo of the one texture when textures are off (about 0.5 after a 2.2 gamma)."""
SRGB_GAMMA = 2.2


@dataclass(frozen=True)
class TextureBank:
    """N square textures of S px, float32 linear albedo in [0, 1] (the generated sRGB colours
    ^ 2.2, so that the camera's gamma shows them as generated), held planar: ``planes``
    (3, N * S * S), each channel contiguous (a lookup is one gather per channel); and each
    texture's kind."""

    planes: np.ndarray
    kinds: tuple[str, ...]
    size_px: int

    @classmethod
    def from_albedo(cls, albedo: np.ndarray, kinds) -> TextureBank:
        """The bank of (N, S, S, 3) ``albedo``."""
        planes = np.ascontiguousarray(np.asarray(albedo, np.float32).reshape(-1, 3).T)
        return cls(planes, tuple(kinds), int(albedo.shape[1]))

    def __len__(self) -> int:
        return len(self.kinds)

    @property
    def albedo(self) -> np.ndarray:
        """(N, S, S, 3) view of the planes."""
        s = self.size_px
        return self.planes.T.reshape(len(self), s, s, 3)


def _colours(n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, 3) random colours: uniform RGB with a random brightness, some near-grey."""
    rgb = rng.random((n, 3), dtype=np.float32)
    grey = rng.random(n) < 0.25
    rgb[grey] = rgb[grey].mean(axis=1, keepdims=True)
    return rgb


def _grid(size: int) -> tuple[np.ndarray, np.ndarray]:
    c = (np.arange(size, dtype=np.float32) + 0.5) / size
    return np.meshgrid(c, c, indexing="xy")  # (S, S) x right, y down, in [0, 1)


def _noise(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """Smooth value noise: a coarse random grid per channel, bilinearly upsampled (periodic,
    so the texture tiles without seams), two octaves."""
    out = np.zeros((n, size, size, 3), np.float32)
    x, y = _grid(size)
    for octave, weight in ((0, 0.65), (1, 0.35)):
        cells = rng.integers(2, 9, n) * (2**octave)
        for i in range(n):
            c = int(cells[i])
            coarse = rng.random((c, c, 3), dtype=np.float32)
            gx, gy = x * c, y * c
            x0, y0 = np.floor(gx).astype(int) % c, np.floor(gy).astype(int) % c
            fx, fy = (gx - np.floor(gx))[..., None], (gy - np.floor(gy))[..., None]
            x1, y1 = (x0 + 1) % c, (y0 + 1) % c
            top = coarse[y0, x0] * (1 - fx) + coarse[y0, x1] * fx
            bottom = coarse[y1, x0] * (1 - fx) + coarse[y1, x1] * fx
            out[i] += weight * (top * (1 - fy) + bottom * fy)
    tint = _colours(n, rng)[:, None, None, :]
    return np.clip(out * (0.5 + tint), 0, 1)


def _two_colour(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    a, b = _colours(len(mask), rng), _colours(len(mask), rng)
    m = mask[..., None]
    return np.where(m, a[:, None, None, :], b[:, None, None, :]).astype(np.float32)


def _checkers(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    x, y = _grid(size)
    k = 2 * rng.integers(1, 5, n)[:, None, None]  # an even count per side: seamless tiling
    mask = ((np.floor(x * k) + np.floor(y * k)) % 2).astype(bool)
    return _two_colour(mask, rng)


def _stripes(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    x, y = _grid(size)
    # integer wave numbers along x and y keep the stripes periodic on the tile
    kx = rng.integers(-6, 7, n)[:, None, None]
    ky = rng.integers(0, 7, n)[:, None, None]
    ky = np.where((kx == 0) & (ky == 0), 1, ky)
    duty = rng.uniform(0.2, 0.8, n)[:, None, None]
    phase = (kx * x + ky * y) % 1.0
    return _two_colour(phase < duty, rng)


def _gradient(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    x, y = _grid(size)
    angle = rng.uniform(0, 2 * np.pi, n)[:, None, None]
    # a triangle wave along the direction: periodic, no seam at the tile's border
    s = (np.cos(angle) * x + np.sin(angle) * y) % 1.0
    t = (1 - np.abs(2 * s - 1))[..., None].astype(np.float32)
    a, b = _colours(n, rng), _colours(n, rng)
    return a[:, None, None, :] * (1 - t) + b[:, None, None, :] * t


def _flat(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    return np.broadcast_to(_colours(n, rng)[:, None, None, :], (n, size, size, 3)).copy()


_MAKERS = {
    "noise": _noise,
    "checkers": _checkers,
    "stripes": _stripes,
    "gradient": _gradient,
    "flat": _flat,
}


def make_texture_bank(term: TextureTerm, seed: int) -> TextureBank:
    """``term.count`` textures of ``term.size_px`` px, the kinds in turn (texture i has kind
    ``term.kinds[i % len(kinds)]``), each kind from its own stream of ``seed``: the same seed
    and term give the same bank; then the images of ``term.images`` (kind ``image``).
    ``term.enabled`` false: one flat mid-grey texture."""
    size = term.size_px
    if not term.enabled:
        return TextureBank.from_albedo(np.full((1, size, size, 3), FLAT_GREY, np.float32), ["flat"])
    kinds = [term.kinds[i % len(term.kinds)] for i in range(term.count)]
    albedo = np.empty((term.count, size, size, 3), np.float32)
    for k, kind in enumerate(dict.fromkeys(term.kinds)):
        where = np.array([i for i, name in enumerate(kinds) if name == kind], dtype=np.intp)
        rng = np.random.default_rng([seed, 7, k])
        albedo[where] = _MAKERS[kind](len(where), size, rng)
    if term.images is not None:  # after the procedural ones: their indices stay
        photos = image_textures(term.images, size)
        albedo = np.concatenate([albedo, photos])
        kinds += ["image"] * len(photos)
    return TextureBank.from_albedo(np.power(albedo, np.float32(SRGB_GAMMA)), kinds)


def image_textures(folder: str | Path, size: int) -> np.ndarray:
    """(N, size, size, 3) float32 sRGB in [0, 1]: every image of ``folder`` (sorted by name),
    centre-cropped square and resized. InputError when the folder holds none or one is
    unreadable."""
    from PIL import Image, UnidentifiedImageError

    files = sorted(p for p in Path(folder).iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise InputError(folder, "textures.images", "no PNG or JPEG image in this folder")
    out = np.empty((len(files), size, size, 3), np.float32)
    for i, path in enumerate(files):
        try:
            with Image.open(path) as img:
                rgb = img.convert("RGB")
        except (OSError, UnidentifiedImageError) as exc:
            raise InputError(path, "textures.images", f"not a readable image ({exc})") from None
        side = min(rgb.size)
        left, top = (rgb.width - side) // 2, (rgb.height - side) // 2
        square = rgb.crop((left, top, left + side, top + side)).resize((size, size))
        out[i] = np.asarray(square, np.float32) / 255.0
    return out


def triplanar_uv(points: np.ndarray, normals: np.ndarray, tile_m: np.ndarray) -> np.ndarray:
    """(2, N) texture coordinates in tiles (wrap with % 1): the hit point's two coordinates
    across the normal's dominant axis (the first of equals), divided by the tile side. points,
    normals: (3, N) in the surface's own frame; tile_m: (N,) metres."""
    ax, ay, az = np.abs(normals)
    x_dominant = (ax >= ay) & (ax >= az)
    z_dominant = (az > ax) & (az > ay)
    # the two coordinates kept for each dominant axis: x -> (y, z), y -> (x, z), z -> (x, y)
    inv_tile = 1 / np.asarray(tile_m, points.dtype)
    uv = np.empty((2, points.shape[1]), points.dtype)
    np.multiply(np.where(x_dominant, points[1], points[0]), inv_tile, out=uv[0])
    np.multiply(np.where(z_dominant, points[1], points[2]), inv_tile, out=uv[1])
    return uv


def sample_texture(bank: TextureBank, texture: np.ndarray, uv: np.ndarray) -> np.ndarray:
    """(3, N) float32 albedo: nearest texel of texture ``texture[i]`` (N,) int at ``uv[:, i]``
    (tiles, wrapped)."""
    s = bank.size_px
    ij = np.floor(uv * np.float32(s)).astype(np.intp)
    if s & (s - 1):
        ij %= s
    else:  # a power of two: wrap by a bit mask (a float or integer modulo costs 5x as much)
        ij &= s - 1
    flat = (texture * s + ij[1]) * s + ij[0]  # one gather per channel of the flattened bank
    planes = bank.planes
    return np.stack([np.take(planes[c], flat) for c in range(3)])
