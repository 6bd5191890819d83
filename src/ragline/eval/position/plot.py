"""The plot of the position experiment: accuracy against the gold source's position, one line per reader."""

from __future__ import annotations

from typing import Any


def plot_curves(payload: dict[str, Any], path: str) -> None:
    """Accuracy vs position of the gold source, one line per reader; the gold source alone dashed.

    Two panels: graded correct (the value *and* a citation of the gold document, the lecture's rule)
    and the value alone (Liu et al.'s measure: does a gold answer occur in the output). They differ
    for the LLM when it answers without ``[n]`` markers and ragline cannot attribute the sentence.
    """
    import matplotlib

    matplotlib.use("Agg")  # no display: write the file only
    import matplotlib.pyplot as plt

    k = int(payload["k"])
    panels = [("accuracy", "correct (value and gold citation)"), ("answer_match", "value in the answer (Liu et al.)")]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    for ax, (measure, title) in zip(axes, panels):
        for spec, result in payload["readers"].items():
            curve = result["positions"]
            ys = [float("nan") if a is None else a for a in curve[measure]]
            (line,) = ax.plot(range(1, k + 1), ys, marker="o", label=f"{_short(spec)} (n={curve['n']})")
            alone = curve["oracle"][measure]
            if alone is not None:
                ax.axhline(
                    alone, color=line.get_color(), linestyle="--", linewidth=1, label=f"{_short(spec)}, gold alone"
                )
        ax.set_xticks(range(1, k + 1))
        ax.set_xlabel(f"position of the gold source among {k}")
        ax.set_title(title, fontsize=10)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("share of questions")
    axes[0].legend(fontsize=8, loc="lower left")
    fig.suptitle(f"Lost in the middle on {payload['corpus']}: {k} sources, 1 gold + {k - 1} BM25 distractors")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _short(spec: str) -> str:
    """The plot label of a spec: the LLM's model name (``qwen2.5-coder-0.5b``), else the reader name."""
    name, _, rest = spec.partition(":")
    if name == "llm":
        model = next((p.split("=", 1)[1] for p in rest.split(",") if p.startswith("model=")), "llm")
        return model.split(":")[-1]
    return name
