"""``ragline train reranker|embedder DATASET --name NAME``: fine-tune a model here (see ``ragline.train``).

``ragline train queries CORPUS --out DIR`` writes synthetic training queries for a corpus without any
(``ragline.train.synthetic``), as a BEIR folder the two trainers read; ``ragline train thesaurus CORPUS
--out FILE`` builds a synonym thesaurus from a corpus (``ragline.retrieve.thesaurus``).
"""

from __future__ import annotations

import argparse
from dataclasses import fields
from typing import Any

from ragline.cli.common import add_common, emit_json, positive_int
from ragline.errors import ConfigError
from ragline.progress import stderr
from ragline.train.reader_data import NO_ANSWER_MODES

# Flags of one kind only: given for the other kind they are an error, not silently ignored.
_ONLY = {
    "reranker": ("negatives", "dev_depth", "queries_per_step", "max_length"),
    "embedder": ("dev_pool", "batch_size", "max_seq_length", "scale"),
    "reader": (
        "dev_questions",
        "max_questions",
        "skip_questions",
        "no_answer",
        "dev_no_answer",
        "no_answer_share",
        "stride",
        "max_answer_tokens",
    ),
}
_TRAINERS = ("reranker", "embedder", "reader")


def _settings_class(kind: str) -> Any:
    from ragline.train.embedder import EmbedderTraining
    from ragline.train.reader import ReaderTraining
    from ragline.train.reranker import RerankerTraining

    return {"embedder": EmbedderTraining, "reranker": RerankerTraining, "reader": ReaderTraining}[kind]


def _settings(args: argparse.Namespace) -> Any:
    kind = _settings_class(args.kind)
    own = {f.name for f in fields(kind)}
    for other in _TRAINERS:
        wrong = [name for name in _ONLY[other] if name not in own and getattr(args, name, None) is not None]
        if other != args.kind and wrong:
            flags = ", ".join("--" + name.replace("_", "-") for name in wrong)
            raise ConfigError(f"{flags}: only for `ragline train {other}`, not {args.kind}")
    given = {name: getattr(args, name) for name in own if getattr(args, name, None) is not None}
    return kind(**given)


def cmd_train(args: argparse.Namespace) -> int:
    from ragline.train.models import check_name, read_card, trained_path

    if args.kind in _CORPUS_KINDS:
        return _CORPUS_KINDS[args.kind](args)
    if args.name is None:
        raise ConfigError(f"`ragline train {args.kind}` needs --name NAME (the model is then trained:NAME)")
    check_name(args.name)
    settings = _settings(args)
    card = read_card(trained_path(args.name))
    if card and card.get("id") == f"{args.name}@{settings.key()}" and not args.force:
        # Same settings as the saved model: training again would give the same model (seeded), so skip it.
        stderr.print(f"trained:{args.name} is up to date ({trained_path(args.name)}); --force trains it again")
    elif args.kind == "reader":
        from ragline.train.reader import train_reader

        card = train_reader(args.dataset, args.name, settings, log=stderr.print, progress=True)
    elif args.kind == "embedder":
        from ragline.train.embedder import train_embedder

        card = train_embedder(args.dataset, args.name, settings, log=stderr.print, progress=True)
    else:
        from ragline.train.reranker import train_reranker

        card = train_reranker(args.dataset, args.name, settings, log=stderr.print, progress=True)
    if args.output == "json":
        emit_json(card)
    else:
        dev = card["dev"]
        first = f"first stage {dev['first_stage']:.4f}, " if dev.get("first_stage") is not None else ""
        print(
            f"trained:{args.name}: {card['steps']} steps in {card['seconds']} s; dev {dev['metric']}: "
            f"{first}untrained {dev['untrained']:.4f}, trained {dev['best']:.4f}"
        )
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "train",
        help="fine-tune a reranker or an embedder from the packaged MiniLM on a dataset's train split",
        description="Hard negatives are mined by a first-stage retriever (judged positives excluded), a seeded "
        "dev slice of the train queries picks the best step, and the model is saved with a card under "
        "$RAGLINE_CACHE/models/NAME; a pipeline names it as trained:NAME (cross:model=trained:NAME for a "
        "reranker; the index's embedder for an embedder). A model already trained with the same settings is "
        "kept (--force trains again); an interrupted run resumes.",
    )
    p.add_argument(
        "kind",
        choices=("reranker", "embedder", "reader", "queries", "thesaurus"),
        help="what to train; reader: a span reader (SQuAD-layout JSON lines); queries: synthetic queries for a "
        "corpus; thesaurus: synonym groups from a corpus",
    )
    p.add_argument(
        "dataset",
        help="BEIR folder with qrels/SPLIT.tsv (e.g. ../shared/bench/scifact); for queries and thesaurus a corpus: "
        "a BEIR folder, a corpus.jsonl or a folder of documents",
    )
    p.add_argument("--name", help="model name: trained:NAME (reranker, embedder and reader)")
    p.add_argument("--split", help="qrels split to train on (train)")
    p.add_argument("--base", help="model to start from (minilm)")
    p.add_argument(
        "--negatives-from",
        dest="negatives_from",
        help="retriever spec that mines negatives (reranker bm25, embedder hybrid)",
    )
    p.add_argument(
        "--mine-depth", dest="mine_depth", type=positive_int, help="negatives sampled from this top (30; 20)"
    )
    p.add_argument("--dev-fraction", dest="dev_fraction", type=float, help="share of train queries for dev (0.1)")
    p.add_argument("--epochs", type=positive_int, help="passes over the train queries (1)")
    p.add_argument("--max-steps", dest="max_steps", type=positive_int, help="stop after this many steps")
    p.add_argument("--learning-rate", dest="learning_rate", type=float, help="AdamW learning rate (5e-5; 3e-5)")
    p.add_argument("--warmup", type=float, help="share of the steps with a rising learning rate (0.1)")
    p.add_argument("--eval-every", dest="eval_every", type=positive_int, help="steps between dev evaluations (50; 16)")
    p.add_argument("--patience", type=positive_int, help="evaluations without a dev gain before stopping (3)")
    p.add_argument("--max-queries", dest="max_queries", type=positive_int, help="use only this many queries")
    p.add_argument("--seed", type=int, help="seed of the dev slice, sampling, order and new weights (0)")
    p.add_argument("--threads", type=positive_int, help="torch threads (2)")
    reranker = p.add_argument_group("reranker only")
    reranker.add_argument("--negatives", type=positive_int, help="hard negatives per positive (7)")
    reranker.add_argument("--dev-depth", dest="dev_depth", type=positive_int, help="dev candidates reranked (20)")
    reranker.add_argument("--queries-per-step", dest="queries_per_step", type=positive_int, help="queries a step (4)")
    reranker.add_argument(
        "--max-length", dest="max_length", type=positive_int, help="word pieces per pair (192; reader: per window)"
    )
    embedder = p.add_argument_group("embedder only")
    embedder.add_argument(
        "--dev-pool", dest="dev_pool", type=positive_int, help="per dev query, BM25's and MiniLM's top in the pool (5)"
    )
    embedder.add_argument(
        "--batch-size", dest="batch_size", type=positive_int, help="queries a step (16; reader: examples a step)"
    )
    embedder.add_argument("--max-seq-length", dest="max_seq_length", type=positive_int, help="word pieces (256)")
    embedder.add_argument("--scale", type=float, help="similarity scale of the in-batch softmax (20)")
    reader = p.add_argument_group(
        "reader only (DATASET: SQuAD-layout JSON lines, e.g. reader_train/squad_v1.1_train.jsonl.gz)"
    )
    reader.add_argument(
        "--max-questions", dest="max_questions", type=positive_int, help="train questions sampled (6000)"
    )
    reader.add_argument("--dev-questions", dest="dev_questions", type=positive_int, help="dev questions read (100)")
    reader.add_argument(
        "--no-answer",
        dest="no_answer",
        choices=NO_ANSWER_MODES,
        help="how no-answer examples are made (both; similar: the article's paragraph sharing the question's "
        "rare words; hard: similar and removed; swapped: the question's name or number replaced by another article's; "
        "negated: the question's auxiliary verb negated (did -> didn't); antonym: a word the answer's sentence holds "
        "turned into its opposite (largest -> smallest); adversarial: swapped, similar and removed; "
        "adversarial-negated: the four; adversarial-antonym: antonym where it fits, else the adversarial three)",
    )
    reader.add_argument(
        "--dev-no-answer",
        dest="dev_no_answer",
        choices=NO_ANSWER_MODES[:-1],
        help="how the dev slice's no-answer examples (the threshold's calibration) are made (both)",
    )
    reader.add_argument(
        "--skip-questions",
        dest="skip_questions",
        type=positive_int,
        help="leave out the questions a run with --max-questions N (same seed) sampled: a second round's new ones",
    )
    reader.add_argument("--no-answer-share", dest="no_answer_share", type=float, help="no-answer per question (0.5)")
    reader.add_argument("--stride", type=positive_int, help="overlap of a passage's windows, word pieces (32)")
    reader.add_argument(
        "--max-answer-tokens", dest="max_answer_tokens", type=positive_int, help="longest answer, word pieces (30)"
    )
    p.add_argument("--force", action="store_true", help="train again even when up to date")
    _add_corpus_flags(p)
    add_common(p, index=False)
    p.set_defaults(func=cmd_train)


# --- synthetic queries and the corpus thesaurus --------------------------------------------------------

# Flags of the corpus kinds; the trainers' flags given with them are an error (_check_corpus_flags).
_CORPUS_FLAGS = {
    "queries": ("out", "chunker", "sample", "llm", "filter_first", "filter_depth", "max_tokens"),
    "thesaurus": ("out", "threshold", "neighbours", "min_df", "embedder"),
}


def _check_corpus_flags(args: argparse.Namespace) -> None:
    from ragline.train.embedder import EmbedderTraining
    from ragline.train.reranker import RerankerTraining

    trainer = {f.name for kind in (EmbedderTraining, RerankerTraining) for f in fields(kind)} - {"seed", "threads"}
    other = {name for flags in _CORPUS_FLAGS.values() for name in flags} - set(_CORPUS_FLAGS[args.kind])
    wrong = sorted(name for name in trainer | other | {"name"} if getattr(args, name, None) is not None)
    if wrong:
        flags = ", ".join("--" + name.replace("_", "-") for name in wrong)
        raise ConfigError(f"{flags}: not an option of `ragline train {args.kind}`")
    if args.out is None:
        what = "folder for the queries (a BEIR folder)" if args.kind == "queries" else "thesaurus file to write"
        raise ConfigError(f"`ragline train {args.kind}` needs --out: the {what}")


def cmd_queries(args: argparse.Namespace) -> int:
    """Write synthetic queries for the corpus (resumable), keep the round-trip consistent ones, write DIR."""
    from ragline.models.llm import load_llm
    from ragline.retrieve.registry import build_retriever, needs_embeddings
    from ragline.train import synthetic

    _check_corpus_flags(args)
    seed = 0 if args.seed is None else args.seed
    documents = synthetic.read_corpus(args.dataset, log=stderr.print)
    passages = synthetic.corpus_passages(documents, args.chunker or synthetic.DEFAULT_CHUNKER)
    sample = synthetic.sample_passages(passages, args.sample, seed)
    stderr.print(f"{len(documents)} documents, {len(passages)} passages; writing queries for {len(sample)}")
    llm = load_llm(args.llm)
    try:
        max_tokens = args.max_tokens or synthetic.DEFAULT_MAX_TOKENS
        records = synthetic.generate_queries(sample, llm, args.out, max_tokens=max_tokens, seed=seed, log=stderr.print)
    finally:
        llm.close()
    first = args.filter_first or "hybrid"
    # Every passage is searched and written, sampled or not: the filter's question is whether the query finds
    # its passage among all of them, and the trainers mine negatives among all of them.
    index = synthetic.passage_index(passages, embedder="minilm" if needs_embeddings(first) else None)
    kept = synthetic.round_trip_filter(records, build_retriever(first, index), args.filter_depth or 5)
    counts = synthetic.write_training_folder(passages, kept, args.out)
    summary = {
        "passages": len(passages),
        "sampled": len(sample),
        "written": sum(1 for r in records if r.get("query")),
        "kept": counts["queries"],
        "filter": f"own passage in the {first} top {args.filter_depth or 5}",
        "out": str(args.out),
    }
    if args.output == "json":
        emit_json(summary)
    else:
        print(
            f"{summary['kept']} of {summary['written']} synthetic queries kept ({summary['filter']}) -> {args.out}; "
            f"train on it: ragline train embedder {args.out} --name NAME"
        )
    return 0


def cmd_thesaurus(args: argparse.Namespace) -> int:
    """Build synonym groups from the corpus's terms and the embedder's vocabulary; write them to FILE."""
    from ragline.retrieve.thesaurus import build_thesaurus, write_thesaurus
    from ragline.train.synthetic import read_corpus

    _check_corpus_flags(args)
    documents = read_corpus(args.dataset, log=stderr.print)
    threshold = 0.6 if args.threshold is None else args.threshold
    neighbours = args.neighbours or 3
    embedder = args.embedder or "minilm"
    groups = build_thesaurus(documents, embedder, threshold=threshold, neighbours=neighbours, min_df=args.min_df or 2)
    comment = (
        f"built by `ragline train thesaurus` from {args.dataset} ({len(documents)} documents): corpus terms "
        f"and their {neighbours} nearest {embedder} vocabulary words with cosine >= {threshold}"
    )
    write_thesaurus(groups, args.out, comment)
    if args.output == "json":
        emit_json({"groups": len(groups), "out": str(args.out), "threshold": threshold, "neighbours": neighbours})
    else:
        print(
            f"{len(groups)} synonym groups -> {args.out}; use them: --retriever "
            f"'transformed:first=hybrid,transforms=\"synonyms:file={args.out}\"'"
        )
    return 0


_CORPUS_KINDS = {"queries": cmd_queries, "thesaurus": cmd_thesaurus}


def _add_corpus_flags(p: argparse.ArgumentParser) -> None:
    queries = p.add_argument_group("queries and thesaurus only")
    queries.add_argument("--out", help="queries: the folder written (resumable); thesaurus: the file written")
    queries.add_argument("--chunker", help="queries: passages are the corpus's chunks (structure:max_words=200)")
    queries.add_argument("--sample", type=positive_int, help="queries: only this many passages, a seeded sample")
    queries.add_argument("--llm", help="queries: the LLM that writes them (local:qwen2.5-coder-0.5b)")
    queries.add_argument("--max-tokens", dest="max_tokens", type=positive_int, help="queries: reply tokens (48)")
    queries.add_argument(
        "--filter-first", dest="filter_first", help="queries: the retriever of the round-trip filter (hybrid)"
    )
    queries.add_argument(
        "--filter-depth",
        dest="filter_depth",
        type=positive_int,
        help="queries: keep a query when its own passage is in the filter's top N (5)",
    )
    queries.add_argument(
        "--threshold", type=float, help="thesaurus: least cosine of a synonym (0.6, chosen on the Orrin training world)"
    )
    queries.add_argument("--neighbours", type=positive_int, help="thesaurus: synonyms per corpus term (3)")
    queries.add_argument("--min-df", dest="min_df", type=positive_int, help="thesaurus: least documents of a term (2)")
    queries.add_argument("--embedder", help="thesaurus: the word vectors and the vocabulary (minilm)")
