"""A tiny BEIR folder with a train split, written into a test's temporary folder."""

from __future__ import annotations

import json
from pathlib import Path

TOPICS = [
    ("mouse", "Tumour growth in mice", "Mice given the compound grew fewer tumours than untreated mice."),
    ("heart", "Statins and the heart", "Statin therapy lowered the rate of heart attacks in older adults."),
    ("sleep", "Sleep and memory", "Students who slept after learning recalled more words the next day."),
    ("salt", "Salt intake and blood pressure", "Lower salt intake reduced blood pressure in hypertensive patients."),
    ("vitd", "Vitamin D and fractures", "Vitamin D supplements did not reduce fractures in healthy adults."),
    ("coffee", "Coffee and liver disease", "Coffee drinkers had lower rates of liver cirrhosis."),
    ("exercise", "Exercise and depression", "Aerobic exercise reduced symptoms of depression in adults."),
    ("smoking", "Smoking and lung cancer", "Smoking raises the risk of lung cancer twenty-fold."),
]
QUERIES = {
    "mouse": "does the compound reduce tumours in mice",
    "heart": "do statins prevent heart attacks",
    "sleep": "does sleep help memory of words",
    "salt": "does less salt lower blood pressure",
    "vitd": "do vitamin D supplements prevent fractures",
    "coffee": "is coffee linked to liver cirrhosis",
    "exercise": "does exercise help depression",
    "smoking": "does smoking cause lung cancer",
}


def write_tiny_beir(root: Path) -> Path:
    """Eight topics, each a relevant document and two near misses sharing its words; every query judged."""
    (root / "qrels").mkdir(parents=True)
    with (root / "corpus.jsonl").open("w") as corpus:
        for key, title, text in TOPICS:
            corpus.write(json.dumps({"_id": key, "title": title, "text": text}) + "\n")
            near = f"A survey of {title.lower()} studies lists open questions about methods and funding."
            corpus.write(json.dumps({"_id": f"{key}-survey", "title": f"{title}: a survey", "text": near}) + "\n")
            other = f"Letters on {title.split()[0].lower()} and editorial policy; no new data are reported."
            corpus.write(json.dumps({"_id": f"{key}-letter", "title": "Letters", "text": other}) + "\n")
    with (root / "queries.jsonl").open("w") as queries:
        for key, text in QUERIES.items():
            queries.write(json.dumps({"_id": f"q-{key}", "text": text}) + "\n")
    rows = "".join(f"q-{key}\t{key}\t1\n" for key in QUERIES)
    (root / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\n" + rows)
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + rows)
    return root


def encoder_change(trained: Path, base: str = "minilm") -> float:
    """The largest change of any transformer-layer weight between a trained model's folder and its base model.

    Keys are matched by their path below ``encoder.`` (a cross-encoder saves them under ``bert.``); 0.0 means
    training never moved the weights (an optimizer that never stepped)."""
    import numpy as np
    from safetensors.numpy import load_file

    from ragline.train.models import resolve_model

    def layers(folder: Path) -> dict[str, np.ndarray]:
        tensors: dict[str, np.ndarray] = {}
        for path in sorted(Path(folder).rglob("*.safetensors")):
            for key, value in load_file(str(path)).items():
                if "encoder.layer." in key:
                    tensors[key[key.index("encoder.layer.") :]] = value
        return tensors

    ours, theirs = layers(trained), layers(Path(resolve_model(base, "embedder")))
    shared = sorted(set(ours) & set(theirs))
    assert shared, f"no transformer layer in common between {trained} and {base}"
    return max(float(np.abs(ours[k].astype(np.float64) - theirs[k].astype(np.float64)).max()) for k in shared)
