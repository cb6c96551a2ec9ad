# The two set-up commands of the README: `make run` and `make test`. Both build .venv on first use.
# `make stack` is the optional third: the Procfile on local PostgreSQL and Redis.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat requirements.txt requirements-dev.txt | cksum | cut -d' ' -f1)

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	rm -f $(VENV)/.installed-*; touch $(STAMP)

.PHONY: install run test test-pgbouncer cluster cluster-check fuzz stack woocommerce-zip woocommerce-phpunit woocommerce-pot
install: $(STAMP)

# Tender on its embedded default: SQLite in instance/, in-process Redis and jobs, on PORT (8000).
# Its first screen stays: the migrations log at WARNING, the URL and the demo store's key come last
# before gunicorn's own start-up lines, and then only requests are logged (LOG_LEVEL=DEBUG: the jobs).
RUN_PORT = $(or $(PORT),8000)
run: $(STAMP)
	@LOG_LEVEL=$(or $(LOG_LEVEL),WARNING) $(BIN)/flask --app wsgi db upgrade
	@$(BIN)/flask --app wsgi demo --url http://127.0.0.1:$(RUN_PORT)
	@WEB_CONCURRENCY=1 WEB_THREADS=8 HOST=127.0.0.1 PORT=$(RUN_PORT) exec $(BIN)/gunicorn --config gunicorn.conf.py wsgi:app

# axe-core for the browser tests' accessibility checks (package.json); npm ci only when the lock changes.
NODE_STAMP := node_modules/.package-lock.json
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error

# The test suite: embedded default, or real PostgreSQL/Redis with TEST_DATABASE_URL/TEST_REDIS_URL.
# Without npm the tests that need the npm tools are skipped (CI, with CI set, fails them instead).
test: $(STAMP)
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory $(NODE_STAMP); \
	else echo "make test: no npm here: the tests that need axe-core, the OpenAPI linter or the generated client are skipped"; fi
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

# A stated part of the suite (PGBOUNCER_TESTS: every test of the domain rooms, models, infra and jobs)
# through PgBouncer in transaction mode, on TEST_DATABASE_URL/TEST_REDIS_URL: scripts/pgbouncer_tests.
PGBOUNCER_TESTS ?= tests/services tests/models tests/infra tests/jobs
test-pgbouncer: $(STAMP)
	PYTEST_ARGS="$(or $(PYTEST_ARGS),$(PGBOUNCER_TESTS))" scripts/pgbouncer_tests

# Tender on several hosts on this machine (root: each host is a network namespace it creates and
# removes): `make cluster` keeps one up for CLUSTER_SECONDS; `make cluster-check` runs the chaos
# workload through a Redis failover, an app host cut off and a PgBouncer pause. scripts/cluster.py.
CLUSTER_SECONDS ?= 300
cluster: $(STAMP)
	$(BIN)/python scripts/cluster.py up --seconds $(CLUSTER_SECONDS)
cluster-check: $(STAMP)
	$(BIN)/python scripts/cluster.py check $(CLUSTER_ARGS)

# The contract checked from outside: schemathesis against gunicorn on an ephemeral local port
# (embedded default, or PostgreSQL/Redis with TEST_DATABASE_URL/TEST_REDIS_URL). scripts/fuzz.py.
fuzz: $(STAMP)
	$(BIN)/python scripts/fuzz.py

# Every Procfile process on local PostgreSQL/Redis under honcho, configured by $(STACK_ENV) (made from
# .env.example on first use). `release` runs first, on its own: honcho stops everything when any
# process exits. `queues` (rq-dashboard) is left out: it exits without the operator credentials, and honcho
# would then stop every other process.
STACK_ENV ?= .env
STACK_PROCESSES = $(shell grep -oE '^[a-z_]+' Procfile | grep -vxE 'release|queues')
stack: $(STAMP)
	test -f $(STACK_ENV) || cp .env.example $(STACK_ENV)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/honcho --env $(STACK_ENV) run python scripts/ensure_database.py
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/honcho --env $(STACK_ENV) run flask --app wsgi db upgrade
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/honcho --env $(STACK_ENV) run flask --app wsgi demo
	PATH="$(abspath $(BIN)):$$PATH" exec $(BIN)/honcho --env $(STACK_ENV) start $(STACK_PROCESSES)

# The WooCommerce plugin (plugins/woocommerce/): the installable zip a merchant uploads in
# WordPress (Plugins > Add New > Upload), and its PHPUnit suite (Debian's php-cli and phpunit).
WC_PLUGIN := plugins/woocommerce/tender-for-woocommerce
WC_VERSION = $(shell sed -n 's/^ \* Version: *//p' $(WC_PLUGIN)/tender-for-woocommerce.php)
woocommerce-zip:
	@for f in $$(find $(WC_PLUGIN) -name '*.php'); do php -l $$f >/dev/null || exit 1; done
	mkdir -p dist
	$(PYTHON) scripts/woocommerce_zip.py $(WC_PLUGIN) dist/tender-for-woocommerce-$(WC_VERSION).zip

woocommerce-phpunit:
	phpunit -c plugins/woocommerce/tests/phpunit.xml $(PHPUNIT_ARGS)

# The translation template (languages/tender-for-woocommerce.pot), made from the plugin's sources;
# PHPUnit's I18nTest fails while it is not current or a shown text skips i18n.
woocommerce-pot:
	php plugins/woocommerce/tools/make-pot.php $(WC_PLUGIN)
