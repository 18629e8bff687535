"""Options every command that reads depth frames or meshes shares, written once."""

from __future__ import annotations

from typing import Annotated

import typer

Encoding = Annotated[str, typer.Option("--encoding", help="auto, png, tiff, tum, sun, pgm, npy.")]
DepthScale = Annotated[
    float | None, typer.Option("--depth-scale", help="Metres per unit of integer frames.")
]
MeshUnit = Annotated[str, typer.Option("--mesh-unit", help="auto, m, cm, mm or inch.")]
