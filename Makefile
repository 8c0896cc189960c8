# Two entry points for a new user: `make run` and `make test`.
# Both install what is missing (SWI-Prolog, Java 17, the virtual environment)
# and are safe to run again.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run demo-tsunami demo-delivery test setup system-deps bench bench-spark bench-spark-parts bench-latency bench-reasoning bench-memory bench-delivery bench-service demo-influencers clean

# The tsunami warning app (examples/tsunami) on its own sample, on Spark in
# local mode: warnings and a picture per buoy in out/tsunami.
run: demo-tsunami

demo-tsunami: setup
	$(VENV)/bin/cep demo tsunami

test: setup
	$(VENV)/bin/python -m pytest -q

# The C decoder of event batches and the C writer of their text (the
# runtime falls back to Prolog and to Arrow's kernels without them; an
# installed package builds them on first use: cep/runtime/native.py), each
# built unless it holds the digest of its source as it is (a file's time
# does not tell: a checkout, a copy).
setup: system-deps $(STAMP)
	$(PY) -m cep.runtime.native prolog/cep_fast.so cep/runtime/batch_text.so

# SWI-Prolog from Debian's packages; Java 17 for Spark where no java is on PATH.
system-deps:
	@need=""; \
	command -v swipl >/dev/null 2>&1 || need="$$need swi-prolog-nox"; \
	command -v cc >/dev/null 2>&1 || need="$$need gcc"; \
	command -v java >/dev/null 2>&1 || need="$$need openjdk-17-jre-headless"; \
	if [ -n "$$need" ]; then \
	  echo "installing:$$need"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$need; \
	fi

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip uninstall -q -y cep 2>/dev/null || true  # the distribution's former name (now ep-sparql)
	$(PY) -m pip install -q -e '.[test,bench]'
	touch $(STAMP)

bench: setup
	$(PY) bench/run.py

# The Spark engine against Spark's own pass-through and no-op stateful operators.
bench-spark: setup
	$(PY) bench/spark.py

# Spark's stateful path taken apart, step by step (µs per event of each
# part: routing, shuffle, sort, Python, state store, engine).
SIZES ?= 200000
REPEAT ?= 1
bench-spark-parts: setup
	$(PY) bench/spark.py --parts --sizes $(SIZES) --repeat $(REPEAT)

# Latency from an event's arrival to its answer: in process per batch
# size, on Spark per trigger interval, and Spark's real-time trigger.
bench-latency: setup
	$(PY) bench/latency.py

# Memory over 4M events: W2, a sliding-window aggregation (W3), W3 over two
# windows of different sizes and a count window over events of three triples
# (WCOUNT); each size's answer count is checked against the data.
bench-memory: setup
	$(PY) bench/memory.py

# Stream reasoning (the paper's Test 2): a WordNet class hierarchy, installed
# from Debian's wordnet-base when missing.
bench-reasoning: setup
	$(PY) bench/reasoning.py

# The influential-users app (examples/influencers): a stream joined with a
# local SPARQL endpoint whose data change while it runs (SERVICE).
demo-influencers: setup
	$(PY) -m examples.influencers.app

# The goods delivery app (examples/delivery) on the project's own city graph.
demo-delivery: setup
	$(VENV)/bin/cep demo delivery --map ontologies/city.ttl --agents 3 --out out/delivery

# The paper's Test 3 figures: throughput and memory for 1 and 10 delivery agents.
bench-delivery: setup
	$(PY) bench/delivery.py

# The ICWE 2015 seed's experiments: SERVICE views maintained under a budget
# (Tables 1 and 2, Figures 3 and 4) against a local Oxigraph endpoint.
bench-service: setup
	$(PY) bench/service.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache prolog/cep_fast.so cep/runtime/batch_text.so
