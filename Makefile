# koe — the two front-door commands are `make demo` and `make test`.
# Each installs what it needs (Debian packages with apt-get, Python packages with pip) before building.

SWIFT        ?= swift
PYTHON       ?= python3
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BUILD_DEPS   := pkg-config libfftw3-dev libsndfile1-dev
TEST_DEPS    := espeak-ng sox
PY_TEST_DEPS := pyworld soundfile numpy
RELEASE_KOE  := .build/release/koe
DEMO_DIR     := .build/demo
DEMO_INPUT   := samples/en-f-48k.wav

.PHONY: demo test build release deps test-deps conformance bench bench-convert clean

demo: deps release
	@mkdir -p $(DEMO_DIR)
	$(RELEASE_KOE) convert $(DEMO_INPUT) $(DEMO_DIR)/higher.wav --pitch 1.2 --formant 1.1
	$(RELEASE_KOE) convert $(DEMO_INPUT) $(DEMO_DIR)/giant.wav --preset giant
	$(RELEASE_KOE) analyze $(DEMO_INPUT) --output-dir $(DEMO_DIR)/params
	$(RELEASE_KOE) synth $(DEMO_DIR)/params $(DEMO_DIR)/resynthesized.wav
	@echo
	@echo "Input:                          $(DEMO_INPUT)"
	@echo "Pitch x1.2, formants x1.1:      $(DEMO_DIR)/higher.wav"
	@echo "Preset giant:                   $(DEMO_DIR)/giant.wav"
	@echo "Analysis (f0, sp, ap as .npy):  $(DEMO_DIR)/params/"
	@echo "Resynthesized speech:           $(DEMO_DIR)/resynthesized.wav"

test: deps test-deps release
	$(SWIFT) test
	$(PYTHON) Tests/Conformance/conformance.py --koe $(RELEASE_KOE)

conformance: deps test-deps release
	$(PYTHON) Tests/Conformance/conformance.py --koe $(RELEASE_KOE)

bench: deps test-deps
	$(PYTHON) bench/bench.py

# The convert bars: chunking/pipe equivalence, live pipe latency, memory, voice quality (installs its own tools).
bench-convert: deps test-deps release
	@status=0; for script in equivalence latency memory quality; do \
		$(PYTHON) bench/$$script.py --koe $(RELEASE_KOE) || status=1; \
	done; exit $$status

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product koe

# Install only what is missing, so a prepared machine never touches the network.
deps:
	@missing=$$(for p in $(BUILD_DEPS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing system packages:" $$missing; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

test-deps:
	@missing=$$(for p in $(TEST_DEPS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing system packages:" $$missing; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@$(PYTHON) -c "import pyworld, soundfile, numpy" 2>/dev/null || \
		$(PYTHON) -m pip install --quiet $(PY_TEST_DEPS)

clean:
	rm -rf .build
