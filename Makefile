# The two commands a new user needs are `make setup` and `make test`; the rest are conveniences.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup setup-flink docs test test-fast test-spark test-e2e test-differential test-compiled-sql compile-sql differential-flink services-start services-stop quickstart bench bench-frontend bench-frontend-limits bench-startup bench-spark-start bench-prompt-echo bench-job-memory fault-run bench-pulsar bench-connectors bench-engine bench-soak bench-nexmark bench-real-time bench-delta-ivm

## setup: virtual environment, the package in editable mode, JVM artifacts from Maven Central, PostgreSQL's server
## for the jdbc tests (Debian's package, when initdb is missing), the class-data archive that halves a Spark's
## start (shell/engine/cds.py), the quickstart, and last the line that starts the shell (README.md's quick start)
## (what a user needs; PyFlink, which only the differential tests use, is built by `make test`)
setup: $(VENV)/.installed
	scripts/system-deps || echo "streamshell: PostgreSQL's server is missing (see above); everything works but the jdbc connector's tests" >&2
	scripts/jvm-deps spark kafka pulsar
	scripts/jvm-deps localfs || echo "streamshell: jvm/localfs was not built (it needs a JDK's javac); jobs use Hadoop's own local file system, which is slower (docs/services.md)" >&2
	scripts/jvm-deps kafkatx || echo "streamshell: jvm/kafkatx was not built (it needs a JDK's javac); Kafka sinks with 'sink.delivery-guarantee' = 'exactly-once' fail with how to build it (docs/reliability.md)" >&2
	scripts/jvm-deps stages || echo "streamshell: jvm/stages was not built (it needs a JDK's javac); every keyed join stage runs in Python, with slower micro-batches, and a keep-first deduplication on time is refused (docs/services.md)" >&2
	$(BIN)/python -m shell.engine.cds
	$(QUICKSTART)
	@echo ""
	@echo "streamshell is set up. Start it with (no activation needed: pip's launcher runs .venv's Python):"
	@echo ".venv/bin/streamshell"

## setup-flink: .venv-flink with the pinned apache-flink (see docs/differential.md), and Flink's Kafka connector
## for the engine benchmark that make test runs small (tests/e2e/test_benchmarks_run.py)
setup-flink:
	scripts/flink-venv
	scripts/jvm-deps flink

# setuptools warns at every editable install that a folder named like the package in the working directory would
# be imported first ("Editable installation ..."); here that folder is the package itself, so the notice is dropped
$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

## test: every tier; .venv-flink for the differential tests first (a no-op when present); the unit tier on two
## workers (it needs no Spark, no broker and no shared file), then the others on two workers, a test file each at a
## time, each worker with its own Spark (the tests mostly wait on job processes and brokers); brokers are started by
## the first session that needs them if they are not running, stopped by the last, and an outage test holds them
## alone (tests/e2e/shared_brokers.py)
test: setup-flink
	$(BIN)/python -m pytest -m unit -n 2
	$(BIN)/python -m pytest -m "not unit" -n 2 --dist loadfile

## test-fast: unit tests only (no Spark, no broker)
test-fast:
	$(BIN)/python -m pytest -m unit

test-spark:
	$(BIN)/python -m pytest -m spark

test-e2e:
	$(BIN)/python -m pytest -m e2e

## test-cluster: the same jobs on a Spark standalone cluster on loopback (scripts/spark-cluster, docs/cluster.md);
## `make test` skips it (6-10 minutes on 2 busy cores)
.PHONY: test-cluster
test-cluster:
	STREAMSHELL_CLUSTER_TESTS=1 $(BIN)/python -m pytest tests/e2e/test_spark_cluster.py

## test-pythons: the installs: the wheel built and installed in a fresh venv (tests/e2e/test_wheel_install.py),
## then the unit tier and one Spark test on Python 3.12 and 3.13 (pyenv's), each in .venv-3.12 / .venv-3.13
## (made once); docs/development.md has the last results
.PHONY: test-pythons
test-pythons:
	STREAMSHELL_INSTALL_TESTS=1 $(BIN)/python -m pytest tests/e2e/test_wheel_install.py
	scripts/test-pythons

## test-walkthroughs: every seed walkthrough played as CI plays a demo (`make test` plays redpanda-bank.sql; the Pulsar
## ones run the scenarios' pipelines, whose sink messages make test checks), and the scenarios on Kafka too
.PHONY: test-walkthroughs
test-walkthroughs:
	STREAMSHELL_WALKTHROUGHS=all STREAMSHELL_SCENARIOS=all $(BIN)/python -m pytest tests/e2e/test_seed_walkthroughs.py tests/e2e/test_scenarios.py

## test-benchmarks: the benchmarks' small runs with every engine of the engine benchmark (`make test` runs
## streamshell and Flink; this adds the pipeline written by hand in PySpark and Spark's floor, and the append path
## with 'errors.mode' = 'ignore', about 2.5 more minutes), and the night-long soak's small run (3-5 minutes)
.PHONY: test-benchmarks
test-benchmarks:
	STREAMSHELL_BENCH_ENGINES=all STREAMSHELL_SOAK_TEST=1 $(BIN)/python -m pytest tests/e2e/test_benchmarks_run.py tests/e2e/test_soak_run.py

## test-differential: every differential case, streamshell against Flink (`make test` runs the default few)
test-differential: setup-flink
	STREAMSHELL_DIFFERENTIAL=all $(BIN)/python -m pytest -m differential

## compile-sql: optional, the SQL front end compiled by mypyc (~11 min; see shell/compiled_sql.py)
compile-sql: $(VENV)/.installed
	scripts/compile-sql

## test-compiled-sql: the unit tests against the compiled front end (fails if it is missing or stale)
test-compiled-sql:
	STREAMSHELL_COMPILED_SQL=require $(BIN)/python -m pytest -m unit

## differential-flink: Flink's results for every case, printed (cached; no streamshell)
differential-flink: setup-flink
	$(BIN)/python -m differential.compare --all --flink-only

## docs: docs/reference/connectors.md and settings.md written again from the code (shell/reference.py); a unit
## test fails when the committed pages differ from what this writes
docs:
	$(BIN)/python -m shell.reference

services-start:
	scripts/services start

services-stop:
	scripts/services stop

# The quickstart in a home of its own (STREAMSHELL_HOME), removed after it: setup leaves the user's home
# (~/.streamshell) as it found it, with no FINISHED quickstart job in the first SHOW JOBS they see
QUICKSTART = home=$$(mktemp -d) && STREAMSHELL_HOME="$$home" $(BIN)/streamshell -f examples/quickstart.sql; \
	status=$$?; rm -rf "$$home"; exit $$status

## quickstart: examples/quickstart.sql, as make setup runs it (in a temporary home, so it leaves nothing behind)
quickstart:
	$(QUICKSTART)

## bench: every benchmark, each writing its section of docs/benchmarks.md (brokers must be running for pulsar)
bench: bench-frontend bench-frontend-limits bench-startup bench-spark-start bench-prompt-echo bench-pulsar bench-connectors bench-engine bench-soak bench-nexmark bench-real-time

bench-frontend:
	$(BIN)/python -m benchmarks.frontend --write

## bench-frontend-limits: 1 MB inputs of each shape through the parser and planner (docs/benchmarks.md)
bench-frontend-limits:
	$(BIN)/python -m benchmarks.frontend_limits --write

bench-startup:
	$(BIN)/python -m benchmarks.startup --write

## bench-spark-start: a Spark's start with and without the class-data archive (docs/benchmarks.md)
bench-spark-start:
	$(BIN)/python -m benchmarks.spark_start --write

## fault-run: the kill -9 / stop / resume tests of detached jobs at 1,000,000 messages, and Kafka and Pulsar each down
## for 90 s under a job with the default restart strategy (figures: docs/reliability.md)
fault-run:
	STREAMSHELL_FAULT_MESSAGES=1000000 STREAMSHELL_LONG_OUTAGES=1 $(BIN)/python -m pytest -m e2e -p no:randomly \
	  tests/e2e/test_detached_jobs.py tests/e2e/test_long_outages.py
	STREAMSHELL_EO_MESSAGES=1000000 STREAMSHELL_EO_KILLS=3 $(BIN)/python -m pytest -m e2e -p no:randomly -s \
	  tests/e2e/test_kafka_exactly_once.py -k sigkill

## bench-job-memory: a detached job's memory over 10 minutes at a fixed rate (docs/reliability.md)
bench-job-memory:
	$(BIN)/python -m benchmarks.job_memory --write

## bench-prompt-echo: keystroke echo at the prompt and in a live table while two jobs run
bench-prompt-echo:
	$(BIN)/python -m benchmarks.prompt_echo --write

bench-pulsar:
	$(BIN)/python -m benchmarks.pulsar --write

bench-connectors:
	$(BIN)/python -m benchmarks.connectors --write

## bench-engine: the changelog path beside Flink SQL (PyFlink) and the append path beside hand-written PySpark,
## at 1M keys (Kafka must be running; about 40 minutes); `python -m benchmarks.engine --quick` checks it in a few
bench-engine: setup-flink
	$(BIN)/python -m benchmarks.engine --write

## bench-soak: the night-long run (docs/reliability.md, "Night-long run"): the user count and the three-way join at
## 1M keys, each a detached job fed 1K changes/s, for SOAK_MINUTES (480: 8 hours, plus ~30 minutes to start and check),
## sampled every minute into soak.jsonl in the work folder it prints first; the report, with the plots, goes into
## docs/reliability.md and docs/images/ when both sinks are found right. Kafka is started if it is not running (and
## stopped at the end). Unattended: `nohup setsid make bench-soak > /tmp/soak.log 2>&1 &`. Flink beside it:
## `$(BIN)/python -m benchmarks.engine_soak --engines streamshell,flink ...` (after `make setup-flink`); SOAK_ARGS adds
## options (`SOAK_MINUTES=2 SOAK_ARGS="--keys 10000 --no-write"`: a short trial that leaves the docs alone)
SOAK_MINUTES ?= 480
SOAK_ARGS ?=
bench-soak: $(VENV)/.installed
	$(BIN)/python -m benchmarks.engine_soak --minutes $(SOAK_MINUTES) --engines streamshell --write $(SOAK_ARGS)

## bench-nexmark: Nexmark's queries (the differential's 21) over 1M events in Kafka, 3 runs each in streamshell,
## Flink SQL and (q0, q1, q2, q5, q7) hand-written PySpark, every run's sink checked against the other engines'
## before its figures count (Kafka must be running; a few hours on 2 cores; `.venv/bin/python -m
## benchmarks.nexmark --quick` is the same with 20,000 events and 1 run)
bench-nexmark: setup-flink
	scripts/jvm-deps flink
	$(BIN)/python -m benchmarks.nexmark --write

## bench-real-time: a filter and a projection from one Kafka topic into another at 1K and 10K rows/s, 60 s each:
## streamshell in real-time mode ('execution.latency' = 'low'), in micro-batches, and Flink SQL, every engine's output
## checked (Kafka must be running; about 12 minutes; `.venv/bin/python -m benchmarks.real_time --quick` checks it in 3)
bench-real-time: setup-flink
	$(BIN)/python -m benchmarks.real_time --write

## bench-delta-ivm: the Delta Lake prototype of the changelog engine (docs/changelog-engine.md), its small
## correctness check; the only user of the delta JVM bundle, which it resolves first (`make setup` does not)
bench-delta-ivm:
	$(BIN)/python -m pip install --quiet -e '.[dev,prototypes]'
	scripts/jvm-deps delta
	$(BIN)/python -m benchmarks.changelog_prototypes.delta_ivm --check

## test-exactly-once: every test of the exactly-once Kafka sink (`make test` runs the copy, the kill -9 test with one
## kill and the read_committed source; this adds a second kill of the resumed job, replays, open transactions, keyed order, upsert-kafka, a broker restart and the
## delivery benchmark's quick run: about 6 more minutes)
.PHONY: test-exactly-once
test-exactly-once:
	STREAMSHELL_EXACTLY_ONCE=all $(BIN)/python -m pytest tests/e2e/test_kafka_exactly_once.py tests/e2e/test_kafka_delivery_benchmark.py

## fault-run-kafka: the exactly-once Kafka sink's kill test 10 times in a row at 100,000 messages, 3 kills -9 of the
## job process each at random points and RESUME JOB, a read_committed consumer seeing each id once (docs/reliability.md)
.PHONY: fault-run-kafka
fault-run-kafka:
	scripts/fault-run-kafka --runs 10 --messages 100000 --kills 3

## test-gateway: the gateway's tests (tests/gateway): the codec and SCRAM, the catalog queries of psql, DBeaver,
## Grafana and JDBC replayed, psql, psycopg and the PostgreSQL JDBC driver against a running gateway, the wire fuzz
## test and the gateway benchmark's --quick run, which `make test` leaves out (docs/gateway.md)
.PHONY: test-gateway bench-gateway
test-gateway:
	STREAMSHELL_GATEWAY_BENCH=1 $(BIN)/python -m pytest tests/gateway

## bench-gateway: a bounded SELECT through the gateway beside the CLI's json mode, and a change's delay to a
## streaming reader (docs/benchmarks.md, "The gateway beside the CLI")
bench-gateway:
	$(BIN)/python -m benchmarks.gateway --write
