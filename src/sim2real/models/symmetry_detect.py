"""Automatic symmetry detection: rotations that map the part's surface onto itself.

Candidate axes through the surface centroid (which every symmetry keeps in place): the
principal axes of the surface and the dominant face-normal directions. For each axis, samples
of the surface are rotated and their distance to the surface measured; a rotation is a
symmetry when at least ``accept`` of the samples land within ``tol_fraction`` of the diameter.
An axis is continuous when four unrelated angles (29, 73, 137, 211 deg) all pass, otherwise
n-fold for the largest n in 2..12 whose 360/n rotation passes. Accepted rotations generate
the group (closed under composition).

The confidence reported is the worst score of the accepted rotations (the fraction of samples
that matched); for "none", one minus the best score of the rejected candidates.
Mirror symmetries are ignored: a rigid tracker cannot confuse a part with its mirror image.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from sim2real.models.decimate import surface_samples
from sim2real.models.symmetry import NO_SYMMETRY, Symmetry, parse_symmetry, rotation_about
from sim2real.models.viewpoints import fibonacci_sphere

if TYPE_CHECKING:
    from sim2real.models.part import PreparedModel

CONTINUOUS_TEST_DEG = (29.0, 73.0, 137.0, 211.0)
MAX_ORDER = 12
MAX_GROUP = 120


@dataclass
class DetectedSymmetry:
    symmetry: Symmetry
    confidence: float
    checked: list[dict] = field(default_factory=list)
    """Every candidate tested: axis, kind, order, score."""
    notes: list[str] = field(default_factory=list)


def surface_moments(vertices, faces) -> tuple[np.ndarray, np.ndarray]:
    """Exact area-weighted centroid (3,) and second moment about it (3, 3) of the surface:
    per triangle, integral of x x^T dA = A / 12 (sum v_i v_i^T + 9 m m^T), m its centroid."""
    v0, v1, v2 = (vertices[faces[:, m]] for m in range(3))
    area = 0.5 * np.linalg.norm(np.cross(v1 - v0, v2 - v0), axis=1)
    m = (v0 + v1 + v2) / 3
    centre = (area[:, None] * m).sum(axis=0) / area.sum()
    a, b, c, mc = v0 - centre, v1 - centre, v2 - centre, m - centre
    outer = np.einsum("ni,nj->nij", a, a) + np.einsum("ni,nj->nij", b, b)
    outer += np.einsum("ni,nj->nij", c, c) + 9 * np.einsum("ni,nj->nij", mc, mc)
    return centre, (area[:, None, None] / 12 * outer).sum(axis=0)


def _candidate_axes(vertices, faces, second_moment, rng) -> np.ndarray:
    _, vecs = np.linalg.eigh(second_moment)
    axes = [vecs[:, i] for i in range(3)]
    v0, v1, v2 = (vertices[faces[:, m]] for m in range(3))
    cross = np.cross(v1 - v0, v2 - v0)
    area = np.linalg.norm(cross, axis=1)
    keep = np.flatnonzero(area > 0)
    if len(keep) > 20_000:  # the normal histogram needs no more (area-weighted subset)
        keep = rng.choice(keep, 20_000, replace=False, p=area[keep] / area[keep].sum())
        area = np.zeros_like(area)
        area[keep] = 1.0
    n = cross[keep] / np.linalg.norm(cross[keep], axis=1, keepdims=True)
    bins = fibonacci_sphere(600)
    nb = np.abs(n @ bins.T).argmax(axis=1)  # n and -n are the same axis
    weight = np.bincount(nb, area[keep], len(bins))
    for b in np.argsort(weight)[::-1][:6]:
        if weight[b] < 0.02 * weight.sum():
            break
        members = n[nb == b]
        members = members * np.sign(members @ bins[b])[:, None]
        m = members.mean(axis=0)
        axes.append(m / np.linalg.norm(m))
    unique: list[np.ndarray] = []
    for a in axes:
        if all(abs(a @ u) < np.cos(np.radians(3)) for u in unique):
            unique.append(a / np.linalg.norm(a))
    return np.array(unique)


def _closure(generators: list[np.ndarray], probes: np.ndarray, tol: float) -> list[np.ndarray]:
    """The group the generators make, without the identity. Two products are one element when
    they move every probe point to within ``tol`` of each other: the axes come from the data,
    a fraction of a degree off, and exact comparison would take each product of slightly-off
    rotations for a new element (an equilateral prism's 6 grew past ``MAX_GROUP``)."""

    group, placed = [np.eye(4)], [probes]  # each element and where it moves the probes
    frontier = [np.eye(4)]
    while frontier and len(group) < MAX_GROUP:
        new = []
        for g in frontier:
            for s in generators:
                h = s @ g
                moved = probes @ h[:3, :3].T + h[:3, 3]
                if not any(np.abs(moved - p).max() < tol for p in placed):
                    group.append(h)
                    placed.append(moved)
                    new.append(h)
        frontier = new
    return group[1:]


def detect_symmetry(
    vertices: np.ndarray,
    faces: np.ndarray,
    *,
    tol_fraction: float = 0.005,
    accept: float = 0.99,
    n_samples: int = 3000,
    seed: int = 0,
) -> DetectedSymmetry:
    """Detect the rotational symmetries of a mesh (metres, part frame); see the module doc."""
    import open3d as o3d

    rng = np.random.default_rng(seed)
    vertices = np.asarray(vertices, dtype=np.float64)
    samples = surface_samples(vertices, faces, n_samples, rng)
    centre, second_moment = surface_moments(vertices, faces)
    diameter = float(np.linalg.norm(vertices.max(axis=0) - vertices.min(axis=0)))
    tol = tol_fraction * diameter
    scene = o3d.t.geometry.RaycastingScene()
    scene.add_triangles(
        o3d.core.Tensor(vertices.astype(np.float32)), o3d.core.Tensor(faces.astype(np.uint32))
    )

    def fraction(T: np.ndarray, pts: np.ndarray) -> float:
        p = (pts @ T[:3, :3].T + T[:3, 3]).astype(np.float32)
        d = scene.compute_distance(o3d.core.Tensor(p)).numpy()
        return float(np.mean(d < tol))

    def score(T: np.ndarray) -> float:
        quick = fraction(T, samples[:300])  # most candidates fail by far: decide on 300 first
        return quick if quick < accept - 0.1 else fraction(T, samples)

    checked: list[dict] = []
    continuous: list[tuple[np.ndarray, float]] = []
    rotations: list[tuple[np.ndarray, int, float]] = []
    best_rejected = 0.0
    for axis in _candidate_axes(vertices, faces, second_moment, rng):
        entry = {"axis": [round(float(x), 6) for x in axis]}
        scores = [score(rotation_about(axis, centre, np.radians(a))) for a in CONTINUOUS_TEST_DEG]
        if min(scores) >= accept:
            continuous.append((axis, min(scores)))
            checked.append({**entry, "kind": "continuous", "score": round(min(scores), 4)})
            continue
        found = False
        for order in range(MAX_ORDER, 1, -1):
            s = score(rotation_about(axis, centre, 2 * np.pi / order))
            if s >= accept:
                rotations.append((axis, order, s))
                checked.append({**entry, "kind": "discrete", "order": order, "score": round(s, 4)})
                found = True
                break
            if order == 2:
                best_rejected = max(best_rejected, s, max(scores))
        if not found:
            best = max(scores)
            checked.append({**entry, "kind": "none", "score": round(best, 4)})
    notes: list[str] = []
    if continuous:
        continuous.sort(key=lambda c: -c[1])
        axis, conf = continuous[0]
        if len(continuous) > 1:
            notes.append(
                "several continuous axes (sphere-like part): kept the best one; a sphere's "
                "full symmetry cannot be stored"
            )
        flips = [
            (a, s) for a, o, s in rotations if o % 2 == 0 and abs(a @ axis) < np.cos(np.radians(85))
        ]
        discrete = []
        if flips:
            discrete = [rotation_about(flips[0][0], centre, np.pi)]
            conf = min(conf, flips[0][1])
        sym = Symmetry("continuous", axis=axis, point=centre, discrete=discrete)
        return DetectedSymmetry(sym, conf, checked, notes)
    if rotations:
        generators = [rotation_about(a, centre, 2 * np.pi / o) for a, o, _ in rotations]
        probes = centre + 0.5 * diameter * np.vstack([np.eye(3), -np.eye(3)])
        group = _closure(generators, probes, tol)
        if len(group) + 1 >= MAX_GROUP:
            notes.append(f"symmetry group truncated at {MAX_GROUP} elements")
        conf = min(s for _, _, s in rotations)
        return DetectedSymmetry(Symmetry("discrete", discrete=group), conf, checked, notes)
    return DetectedSymmetry(NO_SYMMETRY, 1.0 - best_rejected, checked, notes)


def symmetry_to_bop(sym: Symmetry) -> dict:
    """BOP ``symmetries_discrete`` (row-major 4x4, mm) / ``symmetries_continuous`` (mm)."""
    discrete = []
    for D in sym.discrete:
        T = np.array(D, dtype=np.float64)
        T[:3, 3] *= 1000.0
        discrete.append([round(float(x), 9) for x in T.reshape(-1)])
    continuous = []
    if sym.kind == "continuous" and sym.axis is not None:
        point = sym.point if sym.point is not None else np.zeros(3)
        continuous.append(
            {
                "axis": [round(float(x), 9) for x in sym.axis],
                "offset": [round(float(x) * 1000.0, 6) for x in point],
            }
        )
    return {"symmetries_discrete": discrete, "symmetries_continuous": continuous}


def resolve_symmetry(
    text: str | None, vertices: np.ndarray, faces: np.ndarray, *, obj_id: int | None = None
) -> Symmetry | None:
    """``--symmetry`` of the evaluating commands: None when not given (the part's own, which a
    plain mesh does not have), ``auto`` the mesh's own rotations (``detect_symmetry``, as
    ``model prepare`` stores them), anything else as ``parse_symmetry`` reads it."""
    if text is None:
        return None
    if str(text).strip().lower() == "auto":
        return detect_symmetry(vertices, faces).symmetry
    return parse_symmetry(text, obj_id=obj_id)


def symmetry_of(part: PreparedModel) -> Symmetry:
    """The symmetry a part's poses are judged with: a MODEL_DIR's stored one; a plain mesh's
    detected, as ``model prepare`` would store it (else a symmetric part's equal poses count
    as errors)."""
    if part.config is not None:
        return part.symmetry
    return detect_symmetry(part.mesh.vertices, part.mesh.faces).symmetry
