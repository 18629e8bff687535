"""The model-preparation part of ``sim2real demo``: a STEP bracket made with the CAD kernel,
prepared into a MODEL_DIR, shown before and after."""

from __future__ import annotations

import time
from pathlib import Path

from sim2real.core.report import ReportSection


def run_model_demo(out: Path, quiet: bool = False) -> list[ReportSection]:
    """Write ``out/model/bracket.step`` (100 x 60 x 50 mm, two holes, a fillet), prepare it into
    ``out/model/bracket_model`` and return report sections whose pictures lie in ``out``
    (names start with ``model_``)."""
    from sim2real.models.demo_cad import bracket_volume_mm3, write_bracket_step
    from sim2real.models.prepare import PrepareConfig, prepare_model
    from sim2real.models.report import prepare_sections

    out = Path(out)
    folder = out / "model"
    t0 = time.perf_counter()
    step = write_bracket_step(folder / "bracket.step", "mm")
    result = prepare_model(step, PrepareConfig(views=1000))
    model_dir = result.write(folder / "bracket_model", overwrite=True, report=False)
    sections = prepare_sections(result, out, prefix="model_")
    config = result.model_config()
    volume_mm3 = (config.volume_m3 or 0.0) * 1e9
    sections[0].title = "Model preparation: STEP bracket -> tracking model"
    sections[0].text = (
        f"A STEP file written by Open CASCADE (millimetres) was imported, tessellated within "
        f"{result.config.chordal_tolerance_mm} mm, cleaned and given a viewpoint model "
        f"({model_dir}). Volume {volume_mm3:.0f} mm^3 against {bracket_volume_mm3():.0f} mm^3 "
        f"analytic. " + sections[0].text
    )
    if not quiet:
        for line in result.summary():
            print(line)
        print(f"model demo: {time.perf_counter() - t0:.1f} s, {model_dir}")
    return sections
