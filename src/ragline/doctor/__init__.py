"""``ragline doctor``: one probe per failure mode of the lecture notes, unfixed against fixed arm.

Each probe (one module here) asks the same questions of the unfixed arm, the fixed arm and the
configured pipeline, and judges the configured pipeline with a confidence-interval rule
(``rules``): recall ceiling, stale index, permission leakage (``unsafe``: the filter-after-top-k arm,
built only here), lost in the middle, distractors, conflicting evidence, error accumulation, missing
stopping rules (``stopping``), prompt injection. ``runner.run_doctor`` runs them; ``report`` writes Markdown and a
self-contained HTML page with inline SVG plots. Questions come from a probe file (``probefile``).
"""
