# koe — the two front-door commands are `make demo` and `make test`.
# Each installs what it needs (Debian packages with apt-get, Python packages with pip) before building.

SWIFT        ?= swift
PYTHON       ?= python3
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BUILD_DEPS   := pkg-config curl gcc libsndfile1-dev librsvg2-dev portaudio19-dev libpipewire-0.3-dev
TEST_DEPS    := espeak-ng sox
BENCH_DEPS   := rubberband-cli g++
PY_TEST_DEPS := pyworld soundfile numpy praat-parselmouth
RELEASE_KOE  := .build/release/koe
# Release code is compiled for the CPU that builds it (AVX2 or AVX-512 where there is one): wider vectors only.
# Swift never fuses a multiply and an add unasked, so the numbers are the same as a generic build's, bit for bit.
# `make release TARGET_CPU=x86-64` makes a binary that runs on any x86-64.
export TARGET_CPU ?= native
RELEASE_FLAGS := -c release -Xswiftc -target-cpu -Xswiftc $(TARGET_CPU)
DEMO_DIR     := .build/demo
DEMO_INPUT   := samples/en-f-48k.wav

# FFTW, built here from Debian's source of the version Debian ships: Debian's own build carries SSE2 and AVX
# codelets only. With the AVX2 and AVX-512 ones this build adds and the plans of Sources/KoeDSP/FFTWisdom.swift (see
# `fftw-wisdom`), a 4096-point real transform takes 3.7 us here where Debian's took 4.8, and a conversion a tenth
# less time. FFTW picks its codelets at run time, so the library runs on any x86-64. Static and position-independent:
# the binary, the plugins and the Python extension each link their own copy, with no FFTW to install beside them.
# Every Swift build below finds it through pkg-config (Package.swift's CFFTW target).
FFTW_VERSION := 3.3.10
FFTW_TARBALL := fftw3_$(FFTW_VERSION).orig.tar.gz
FFTW_URL     := http://deb.debian.org/debian/pool/main/f/fftw3/$(FFTW_TARBALL)
FFTW_SHA256  := 56c932549852cddcfafdab3820b0200c7742675be92179e59e6215b340e26467
# Named by version, so that a new FFTW_VERSION builds afresh instead of keeping the old library.
FFTW_SOURCE  := .build/fftw-$(FFTW_VERSION)-source
FFTW_PREFIX  := $(CURDIR)/.build/fftw-$(FFTW_VERSION)
FFTW_LIBRARY := $(FFTW_PREFIX)/lib/libkoe-fftw3.a
export PKG_CONFIG_PATH := $(FFTW_PREFIX)/lib/pkgconfig$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))

# Installs the Debian packages named that are missing, so a prepared machine never touches the network.
apt_install = missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing system packages:" $$missing; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

.PHONY: demo test build release deps system-deps fftw-wisdom test-deps conformance bench bench-deps bench-micro bench-convert bench-curves bench-live bench-live-f0 soak fuzz sanitize clean

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
	$(PYTHON) Tests/Door/public_symbols.py
	$(PYTHON) Tests/Conformance/conformance.py --koe $(RELEASE_KOE)
	$(PYTHON) Tests/Library/library_test.py --koe $(RELEASE_KOE)
	$(MAKE) --no-print-directory test-plugins
	$(MAKE) --no-print-directory test-virtual-mic
	$(MAKE) --no-print-directory test-python
	$(MAKE) --no-print-directory test-install
	@if command -v slurmctld >/dev/null 2>&1 || [ -x /usr/sbin/slurmctld ]; then \
		$(MAKE) --no-print-directory test-cluster; \
	else \
		echo "cluster: skipped: Slurm is not installed (no slurmctld); make test-cluster installs it and runs the test"; \
	fi

conformance: deps test-deps release
	$(PYTHON) Tests/Conformance/conformance.py --koe $(RELEASE_KOE)

# Issue 4's speed bars in one table: each WORLD stage, the whole conversion (dio and harvest paths, 1 and 2
# threads) and pipe mode against pyworld and `rubberband -3 -F`, at 48 and 16 kHz, alternating runs, median of
# 5 rounds; figures also in .build/bench/results.json. About 10 minutes on 2 cores, and about 4 more for issue
# 38's anchor, WORLD's C++ built here (14 s a DIO-path and 27 s a Harvest-path conversion of 60 s at 48 kHz).
bench: deps test-deps bench-deps release
	$(PYTHON) bench/bench.py --koe $(RELEASE_KOE)

bench-deps:
	@$(call apt_install,$(BENCH_DEPS))

# One frame's work per WORLD stage in steady state (ordo-one/benchmark, package bench/Micro): wall clock and
# allocations, then the allocation bars of bench/Micro/Thresholds (0 a frame or block). Not part of `make test`.
bench-micro: deps
	cd bench/Micro && $(SWIFT) package benchmark --no-progress
	cd bench/Micro && $(SWIFT) package benchmark thresholds check --no-progress

# The convert bars: chunking/pipe equivalence, live pipe latency, memory, voice quality (installs its own tools).
bench-convert: deps test-deps release
	@status=0; for script in equivalence latency memory quality; do \
		$(PYTHON) bench/$$script.py --koe $(RELEASE_KOE) || status=1; \
	done; exit $$status

# Issues 12 and 23's bars for --live: the paced pipe's per-block delay (p95 <= 50 ms); the voicing against
# whole-file DIO + StoneMask per file at 8, 16, 44.1 and 48 kHz (clearly periodic frames kept, holes inside voiced
# runs, the lost share's spread over the rates; bench/LiveF0's live-voicing); then F0 ratios, PESQ against
# pyworld, V/UV agreement, one-thread speed and chunk/thread/pipe equivalence on the corpus and codec2-examples'
# male voices at 16 and 48 kHz and the samples, with PESQ and agreement of WORLD's own F0 on the signal so far
# alongside. About 15 minutes.
CODEC2_VOICES := $(foreach voice,kristoff cq_ref g3plx,/usr/share/codec2/raw/$(voice).raw)
LIVE_SPEECH := $(sort $(wildcard ../shared/corpus/*.wav) $(wildcard samples/*.wav)) $(CODEC2_VOICES)
bench-live: deps test-deps bench-deps release
	@$(call apt_install,codec2-examples)
	cd bench/LiveF0 && $(SWIFT) build $(RELEASE_FLAGS) --product live-voicing
	@status=0; \
	$(PYTHON) bench/latency.py --koe $(RELEASE_KOE) --options "--live --pitch 1.25 --formant 1.1" --p95-bar 50 || status=1; \
	bench/LiveF0/.build/release/live-voicing $(LIVE_SPEECH) || status=1; \
	$(PYTHON) bench/live.py --koe $(RELEASE_KOE) || status=1; \
	exit $$status

# Issue 12's F0 bar: StreamingDio's live mode at look-aheads 0 to 80 ms against whole-signal DIO, frame by frame
# (V/UV agreement, F0 error on jointly voiced frames), on the shared corpus, the samples and codec2-examples' male
# voices at 16 and 48 kHz, with two anchors: today's non-live 80 ms, and WORLD's own figure on the signal so far at
# 30 ms (whole-signal DIO on the signal cut where live mode settles each frame). Package bench/LiveF0, resampling
# with sox; about 5 minutes.
bench-live-f0: deps test-deps
	@$(call apt_install,codec2-examples)
	cd bench/LiveF0 && $(SWIFT) build $(RELEASE_FLAGS) --product live-f0
	bench/LiveF0/.build/release/live-f0 $(LIVE_SPEECH)

# An hour of 48 kHz speech through one VoiceChanger in 480-frame blocks, a settings change every second: no
# non-finite sample, resident memory flat after the first minute (SOAK_MINUTES to shorten). About 4 minutes.
soak: deps test-deps
	$(PYTHON) bench/soak.py --minutes $(or $(SOAK_MINUTES),60)

# Issue 14's bars: --pitch-curve and --f0-file followed (Praat as the tracker), --snap and --vibrato measured on
# synthetic vowels, the limiter on a loud tone, speech identical with and without --no-limit. About 10 s.
bench-curves: deps test-deps release
	$(PYTHON) bench/curves.py --koe $(RELEASE_KOE)

# libFuzzer over the raw PCM reader and writer, the EQ spec parsers, convert's command line (through the
# release binary) and VoiceChanger through `import Koe`, 60 s each or FUZZ_SECONDS; not part of `make test`.
# Corpora grow in .build/fuzz/TARGET; a finding stops the run, is saved as .build/fuzz/TARGET-crash-* and replays with
# `Tests/Fuzz/.build/release/TARGET FILE`. Foundation's Process leaves allocations LeakSanitizer would report,
# so leaks are checked in the in-process targets only. The raw PCM stream and the changer's run of operations
# grow with the input, so those two may take up to 1 KB at once (-len_control=0) instead of growing to it slowly.
# Only the four targets are built: the arguments target runs the release binary, and ld.gold stops with an internal
# error (format_file_lineno) linking koe's own executable under the sanitizers.
FUZZ_TARGETS := FuzzRawPCM FuzzEqualizerSpec FuzzConvertArguments FuzzVoiceChanger
fuzz: deps release
	@for target in $(FUZZ_TARGETS); do \
		$(SWIFT) build -c release --package-path Tests/Fuzz -Xswiftc -sanitize=fuzzer,address --product $$target || exit 1; \
	done
	@for target in $(FUZZ_TARGETS); do \
		mkdir -p .build/fuzz/$$target || exit 1; \
		echo "== $$target, $(or $(FUZZ_SECONDS),60) s"; \
		leaks=1; [ $$target = FuzzConvertArguments ] && leaks=0; \
		lengths=; case $$target in FuzzRawPCM|FuzzVoiceChanger) lengths="-len_control=0 -max_len=1024";; esac; \
		KOE_BINARY=$(CURDIR)/$(RELEASE_KOE) SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=$$leaks \
			Tests/Fuzz/.build/release/$$target -max_total_time=$(or $(FUZZ_SECONDS),60) -print_final_stats=1 \
			$$lengths -artifact_prefix=.build/fuzz/$$target- .build/fuzz/$$target || exit 1; \
	done

# The whole test suite under AddressSanitizer, then ThreadSanitizer, each in a build folder of its own.
# The CLI tests run the koe binary built the same way. Swift's backtracer is off: it trips ASan's shadow memory.
# What is suppressed, and why, is in Tests/Sanitizers: leaks of Foundation, XCTest and the argument parser, and
# the accesses under Synchronization.Mutex, which ThreadSanitizer cannot see taken.
sanitize: deps test-deps
	SWIFT_BACKTRACE=enable=no LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/Sanitizers/lsan-suppressions.txt:print_suppressions=0 \
		$(SWIFT) test --sanitize=address --scratch-path .build-asan
	SWIFT_BACKTRACE=enable=no TSAN_OPTIONS=suppressions=$(CURDIR)/Tests/Sanitizers/tsan-suppressions.txt \
		$(SWIFT) test --sanitize=thread --scratch-path .build-tsan

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product koe

# The LV2 bundle and the LADSPA plugin: thin C wrappers (Sources/KoePlugins) over the C ABI
# (Sources/KoeC/include/koe.h), linked with the archive of the Swift code below it into one shared object each.
# The Swift runtime, Dispatch and Synchronization are linked in statically (-static-stdlib, and the toolchain's
# static archives as one group, since the archives name their own dependencies only in Swift autolink entries the
# linker does not read), so a host loads the plugin on a machine without a Swift toolchain. The group pulls only
# what the archive calls: no core module imports Foundation, which would add 49 MB. Only the descriptor function is
# exported (Sources/KoePlugins/exports.map) and -Bsymbolic binds the plugin's calls to its own copy of the
# runtime; NODELETE keeps the runtime's thread-local destructors and once-tokens valid after a host's dlclose.
PLUGIN_DIR     := .build/plugins
PLUGIN_OBJ     := .build/plugin-objects
PLUGIN_SOURCES := Sources/KoePlugins
PLUGIN_DEPS    := lv2-dev ladspa-sdk
SWIFTC         ?= swiftc
SWIFT_STATIC   := $(shell $(SWIFTC) -print-target-info 2>/dev/null | sed -n 's/.*"runtimeResourcePath": "\(.*\)".*/\1/p')_static/linux
PLUGIN_CFLAGS  := -O2 -fPIC -Wall -Wextra -Werror -std=c11 -ISources/KoeC/include
PLUGIN_LDFLAGS := -emit-library -static-stdlib \
	-Xlinker --whole-archive .build/release/libKoeC.a -Xlinker --no-whole-archive \
	-Xlinker --start-group $(foreach a,$(wildcard $(SWIFT_STATIC)/*.a),-Xlinker $(a)) -Xlinker --end-group \
	$$(pkg-config --libs fftw3) -Xlinker --version-script=$(PLUGIN_SOURCES)/exports.map \
	-Xlinker -Bsymbolic -Xlinker -z -Xlinker nodelete -Xlinker --strip-all
# The hosts the plugin tests run (lv2apply, sox's ladspa effect, a JACK server for koe live), Rubber Band's own
# plugins (the anchor), and the JACK client the live test plays and records with (Praat comes with test-deps).
PLUGIN_TEST_DEPS    := lilv-utils sox jackd2 rubberband-ladspa rubberband-lv2
PY_PLUGIN_TEST_DEPS := JACK-Client

.PHONY: plugins install-plugins plugin-deps test-plugins plugin-test-deps

# SwiftPM archives with `llvm-ar crs`, which adds to an existing archive and keeps the objects of source files since
# removed (--whole-archive then links them: duplicate definitions); a fresh archive holds only the current ones.
plugins: deps plugin-deps
	rm -f .build/release/libKoeC.a
	$(SWIFT) build $(RELEASE_FLAGS) --product KoeC
	@mkdir -p $(PLUGIN_OBJ) $(PLUGIN_DIR)/koe.lv2
	cc $(PLUGIN_CFLAGS) -c $(PLUGIN_SOURCES)/voice.c -o $(PLUGIN_OBJ)/voice.o
	cc $(PLUGIN_CFLAGS) -c $(PLUGIN_SOURCES)/lv2/koe_lv2.c -o $(PLUGIN_OBJ)/koe_lv2.o
	cc $(PLUGIN_CFLAGS) -c $(PLUGIN_SOURCES)/ladspa/koe_ladspa.c -o $(PLUGIN_OBJ)/koe_ladspa.o
	@echo "linking $(PLUGIN_DIR)/koe.lv2/koe.so"
	@$(SWIFTC) -o $(PLUGIN_DIR)/koe.lv2/koe.so $(PLUGIN_OBJ)/koe_lv2.o $(PLUGIN_OBJ)/voice.o $(PLUGIN_LDFLAGS)
	@echo "linking $(PLUGIN_DIR)/koe-ladspa.so"
	@$(SWIFTC) -o $(PLUGIN_DIR)/koe-ladspa.so $(PLUGIN_OBJ)/koe_ladspa.o $(PLUGIN_OBJ)/voice.o $(PLUGIN_LDFLAGS)
	cp $(PLUGIN_SOURCES)/lv2/manifest.ttl $(PLUGIN_SOURCES)/lv2/koe.ttl $(PLUGIN_SOURCES)/lv2/presets.ttl $(PLUGIN_DIR)/koe.lv2/
	@echo "LV2:    $(PLUGIN_DIR)/koe.lv2 (urn:koe:voice)"
	@echo "LADSPA: $(PLUGIN_DIR)/koe-ladspa.so (koe_voice)"

# Where hosts look: ~/.lv2 and ~/.ladspa, or PREFIX/lib/lv2 and PREFIX/lib/ladspa (under DESTDIR) when PREFIX is
# given on the command line or in the environment (the PREFIX `make install` defaults to does not count).
PLUGIN_ROOT := $(if $(filter file,$(origin PREFIX)),,$(DESTDIR)$(PREFIX))
install-plugins: plugins
	@lv2=$(if $(PLUGIN_ROOT),$(PLUGIN_ROOT)/lib/lv2,$(HOME)/.lv2); \
	ladspa=$(if $(PLUGIN_ROOT),$(PLUGIN_ROOT)/lib/ladspa,$(HOME)/.ladspa); \
	mkdir -p "$$lv2" "$$ladspa" && rm -rf "$$lv2/koe.lv2" && cp -R $(PLUGIN_DIR)/koe.lv2 "$$lv2/" && \
	install -m 755 $(PLUGIN_DIR)/koe-ladspa.so "$$ladspa/" && \
	echo "Installed $$lv2/koe.lv2 and $$ladspa/koe-ladspa.so"

# The plugins in lv2apply and sox beside Rubber Band's, and koe live on a headless JACK server (Tests/Plugins);
# about a minute and a half on 2 cores. Part of `make test`.
test-plugins: plugins release test-deps plugin-test-deps
	@status=0; \
	$(PYTHON) Tests/Plugins/plugins_test.py --plugins $(PLUGIN_DIR) --koe $(RELEASE_KOE) || status=1; \
	$(PYTHON) Tests/Plugins/live_test.py --koe $(RELEASE_KOE) || status=1; \
	exit $$status

plugin-deps:
	@$(call apt_install,$(PLUGIN_DEPS))

# `koe live --virtual-mic` in a private headless PipeWire session the test starts (dbus-daemon, pipewire,
# wireplumber, pipewire-pulse on a temporary XDG_RUNTIME_DIR), speech played in with pw-play and the virtual
# source recorded with pw-record (Tests/VirtualMic). Part of `make test`.
VIRTUAL_MIC_TEST_DEPS := pipewire wireplumber pipewire-pulse pipewire-bin pulseaudio-utils dbus

.PHONY: test-virtual-mic virtual-mic-test-deps

test-virtual-mic: release test-deps virtual-mic-test-deps
	$(PYTHON) Tests/VirtualMic/virtual_mic_test.py --koe $(RELEASE_KOE)

virtual-mic-test-deps:
	@$(call apt_install,$(VIRTUAL_MIC_TEST_DEPS))

plugin-test-deps:
	@$(call apt_install,$(PLUGIN_TEST_DEPS))
	@$(PYTHON) -c "import jack" 2>/dev/null || $(PYTHON) -m pip install --quiet $(PY_PLUGIN_TEST_DEPS)

deps: system-deps $(FFTW_LIBRARY)

system-deps:
	@$(call apt_install,$(BUILD_DEPS))

# Configure's and make's output goes to $(FFTW_SOURCE)/build.log, shown only when the build fails. The archive is
# renamed, and fftw3.pc with it, because SwiftPM puts the system's library folder first on the linker's path: a
# libfftw3 of the system's there would be linked instead.
$(FFTW_LIBRARY): | system-deps
	@echo "Building FFTW $(FFTW_VERSION) (Debian's source) into $(FFTW_PREFIX)"
	@rm -rf $(FFTW_SOURCE) $(FFTW_PREFIX) && mkdir -p $(FFTW_SOURCE)
	@curl -fsSL -o $(FFTW_SOURCE)/$(FFTW_TARBALL) $(FFTW_URL)
	@echo "$(FFTW_SHA256)  $(FFTW_SOURCE)/$(FFTW_TARBALL)" | sha256sum --check --quiet
	@tar -xzf $(FFTW_SOURCE)/$(FFTW_TARBALL) -C $(FFTW_SOURCE) --strip-components=1
	@cd $(FFTW_SOURCE) && { ./configure --prefix=$(FFTW_PREFIX) --enable-static --disable-shared --with-pic \
		--enable-sse2 --enable-avx --enable-avx2 --enable-avx512 --disable-fortran --disable-doc CFLAGS=-O3 && \
		$(MAKE) -j$$(nproc) && $(MAKE) install; } > build.log 2>&1 || { tail -30 build.log; exit 1; }
	@mv $(FFTW_PREFIX)/lib/libfftw3.a $(FFTW_LIBRARY)
	@sed -i 's/-lfftw3/-lkoe-fftw3/' $(FFTW_PREFIX)/lib/pkgconfig/fftw3.pc

# Regenerates Sources/KoeDSP/FFTWisdom.swift: FFTW's plans, measured in FFTW_PATIENT mode by FFTW's own
# fftw-wisdom on this machine, for the real transforms koe makes at 8 to 96 kHz (powers of two from 256 to 16384,
# live DIO's two 5 ms blocks at each rate, and a forward 128). Under a minute; run it when FFTW_VERSION changes.
# fftw-wisdom's plans of inverse transforms of 64 and 128 points do not serve koe's planner; koe makes none.
FFTW_WISDOM_SIZES := 256 512 1024 2048 4096 8192 16384 80 110 160 220 240 320 440 480 882 960
fftw-wisdom: deps
	$(FFTW_PREFIX)/bin/fftw-wisdom -n -o .build/fftw-wisdom.txt rof128 $(foreach n,$(FFTW_WISDOM_SIZES),rof$(n) rob$(n))
	@{ echo "// Generated by \`make fftw-wisdom\` (FFTW $(FFTW_VERSION), the Makefile's build); see FFT.swift."; \
		echo; echo 'let fftwWisdom = #"""'; cat .build/fftw-wisdom.txt; echo '"""#'; } > Sources/KoeDSP/FFTWisdom.swift

test-deps:
	@$(call apt_install,$(TEST_DEPS))
	@$(PYTHON) -c "import pyworld, soundfile, numpy, parselmouth" 2>/dev/null || \
		$(PYTHON) -m pip install --quiet $(PY_TEST_DEPS)

# The Python package (python/koe, pyproject.toml, setup.py) as one wheel in dist/: pip runs setuptools, the PEP 517
# backend, whose build step runs `swift build --product KoeC` and links the extension as the plugins are linked
# (FFTW included), so the wheel needs no Swift toolchain, only Debian's libsndfile1. Its version follows
# `koe --version`.
PYTHON_VENV         := .build/python-venv
PY_WHEEL_TEST_DEPS  := pytest numpy pyworld soundfile
PYTHON_TEST_DEPS    := sox codec2-examples

.PHONY: wheel test-python python-venv python-test-deps bench-python

wheel: deps
	rm -rf dist build
	$(PYTHON) -m pip wheel --quiet --no-deps --wheel-dir dist .
	@ls dist/koe-*.whl

# The wheel in a fresh venv with pytest, numpy, pyworld and soundfile: imported with no toolchain and no
# LD_LIBRARY_PATH (`env -i PATH=/usr/bin:/bin`), its extension's libraries resolved outside the toolchain, then
# Tests/Python against pyworld on ../shared/corpus, samples/ and codec2's 8 kHz speech, and against the release koe;
# then the same wheel with numpy 1.x (the extension uses the buffer protocol, not numpy's C API): the changer,
# convert, the codecs and bad input. About 5 minutes on 2 cores. Part of `make test`.
test-python: python-venv release python-test-deps
	KOE_BINARY=$(CURDIR)/$(RELEASE_KOE) OPENBLAS_NUM_THREADS=1 $(PYTHON_VENV)/bin/python -m pytest -q -p no:cacheprovider Tests/Python
	rm -rf $(PYTHON_VENV)-numpy1
	$(PYTHON) -m venv $(PYTHON_VENV)-numpy1
	$(PYTHON_VENV)-numpy1/bin/python -m pip install --quiet dist/koe-*.whl "numpy<2" $(filter-out numpy,$(PY_WHEEL_TEST_DEPS))
	KOE_BINARY=$(CURDIR)/$(RELEASE_KOE) $(PYTHON_VENV)-numpy1/bin/python -m pytest -q -p no:cacheprovider \
		Tests/Python/test_changer.py Tests/Python/test_convert.py Tests/Python/test_readme.py Tests/Python/test_codecs.py \
		"Tests/Python/test_world.py::TestBadInput" "Tests/Python/test_world.py::test_float32_gives_the_float64_result" \
		"Tests/Python/test_world.py::test_wav2world"

# A fresh venv holding the wheel and the test packages; the wheel imports there without the toolchain.
python-venv: wheel
	rm -rf $(PYTHON_VENV)
	$(PYTHON) -m venv $(PYTHON_VENV)
	$(PYTHON_VENV)/bin/python -m pip install --quiet dist/koe-*.whl $(PY_WHEEL_TEST_DEPS)
	cd /tmp && env -i PATH=/usr/bin:/bin $(CURDIR)/$(PYTHON_VENV)/bin/python -c "import koe, koe.world; print('imported', koe.__file__)"
	@extension=$$(ls $(PYTHON_VENV)/lib/python*/site-packages/koe/_koe*.so); \
		if ldd $$extension | grep -E 'not found|swift'; then \
			echo "python-venv: $$extension needs the libraries above" >&2; exit 1; fi

python-test-deps:
	@$(call apt_install,$(PYTHON_TEST_DEPS))

# pyworld against koe.world on 65 s of 48 kHz speech, one call each, default arguments, one thread: harvest
# (bar 4x) and wav2world (bar 3x); two threads running harvest at once against one after the other (bar 0.65).
bench-python: python-venv
	$(PYTHON_VENV)/bin/python bench/python.py

# `make install [PREFIX=/usr/local] [DESTDIR=]`: the release binary, its manual pages (koe.1 and one per subcommand,
# made by swift-argument-parser's generate-manual plugin from the built binary, so they say what it parses), its
# shell completions (made by `koe --generate-completion-script`) and the LV2/LADSPA plugins when they are built.
# `make uninstall` with the same PREFIX and DESTDIR removes exactly those files.
PREFIX          ?= /usr/local
DESTDIR         ?=
INSTALL_ROOT    := $(DESTDIR)$(PREFIX)
MAN_BUILD       := .build/plugins/GenerateManual/outputs/koe
COMPLETIONS_DIR := .build/completions
LV2_BUNDLE      := .build/plugins/koe.lv2
LADSPA_PLUGIN   := .build/plugins/koe-ladspa.so
BASH_COMPLETION := share/bash-completion/completions/koe
ZSH_COMPLETION  := share/zsh/site-functions/_koe
FISH_COMPLETION := share/fish/vendor_completions.d/koe.fish

.PHONY: install uninstall man completions

# The plugin builds the package in release mode with the flags given here, the same as `make release`'s, so it
# reuses that build; its folder is emptied first, so a page of a subcommand that is gone is not installed.
man: release
	rm -rf $(MAN_BUILD)
	$(SWIFT) package -Xswiftc -target-cpu -Xswiftc $(TARGET_CPU) plugin generate-manual --multi-page
	@test -s $(MAN_BUILD)/koe.1 || { echo "make man: no $(MAN_BUILD)/koe.1 from generate-manual" >&2; exit 1; }

completions: release
	@mkdir -p $(COMPLETIONS_DIR)
	$(RELEASE_KOE) --generate-completion-script bash > $(COMPLETIONS_DIR)/koe.bash
	$(RELEASE_KOE) --generate-completion-script zsh > $(COMPLETIONS_DIR)/_koe
	$(RELEASE_KOE) --generate-completion-script fish > $(COMPLETIONS_DIR)/koe.fish

install: release man completions
	install -d $(INSTALL_ROOT)/bin $(INSTALL_ROOT)/share/man/man1 $(dir $(INSTALL_ROOT)/$(BASH_COMPLETION)) \
		$(dir $(INSTALL_ROOT)/$(ZSH_COMPLETION)) $(dir $(INSTALL_ROOT)/$(FISH_COMPLETION))
	install -m 755 $(RELEASE_KOE) $(INSTALL_ROOT)/bin/koe
	install -m 644 $(MAN_BUILD)/*.1 $(INSTALL_ROOT)/share/man/man1/
	install -m 644 $(COMPLETIONS_DIR)/koe.bash $(INSTALL_ROOT)/$(BASH_COMPLETION)
	install -m 644 $(COMPLETIONS_DIR)/_koe $(INSTALL_ROOT)/$(ZSH_COMPLETION)
	install -m 644 $(COMPLETIONS_DIR)/koe.fish $(INSTALL_ROOT)/$(FISH_COMPLETION)
	@if [ -d $(LV2_BUNDLE) ]; then \
		echo "install LV2 bundle: $(INSTALL_ROOT)/lib/lv2/koe.lv2"; \
		install -d $(INSTALL_ROOT)/lib/lv2 && rm -rf $(INSTALL_ROOT)/lib/lv2/koe.lv2 && \
		cp -R $(LV2_BUNDLE) $(INSTALL_ROOT)/lib/lv2/koe.lv2 || exit 1; \
	else echo "no LV2 plugin built ($(LV2_BUNDLE)): not installed"; fi
	@if [ -f $(LADSPA_PLUGIN) ]; then \
		echo "install LADSPA plugin: $(INSTALL_ROOT)/lib/ladspa/koe-ladspa.so"; \
		install -d $(INSTALL_ROOT)/lib/ladspa && install -m 755 $(LADSPA_PLUGIN) $(INSTALL_ROOT)/lib/ladspa/ || exit 1; \
	else echo "no LADSPA plugin built ($(LADSPA_PLUGIN)): not installed"; fi

# Needs no build: every name koe installs is fixed but the subcommands' pages, which are koe.SUBCOMMAND.1.
uninstall:
	rm -f $(INSTALL_ROOT)/bin/koe $(INSTALL_ROOT)/share/man/man1/koe.1 $(INSTALL_ROOT)/share/man/man1/koe.*.1 \
		$(INSTALL_ROOT)/$(BASH_COMPLETION) $(INSTALL_ROOT)/$(ZSH_COMPLETION) $(INSTALL_ROOT)/$(FISH_COMPLETION) \
		$(INSTALL_ROOT)/lib/ladspa/koe-ladspa.so
	rm -rf $(INSTALL_ROOT)/lib/lv2/koe.lv2


# `make install`, then `make uninstall`, into a temporary DESTDIR: the files, `koe --version`, every man page
# rendered by man, the completions (each shell's own completion run on them), nothing left after uninstall.
# Part of `make test`.
INSTALL_TEST_DEPS := man-db groff-base zsh fish
CLUSTER_DEPS      := slurm-wlm munge parallel

.PHONY: test-install install-test-deps test-cluster cluster-deps

test-install: install-test-deps release
	Tests/Install/install_test.sh

install-test-deps:
	@$(call apt_install,$(INSTALL_TEST_DEPS))

# The README's Slurm job array and GNU parallel line, run for real on a single-node Slurm that the test starts
# on localhost (munged, slurmctld, slurmd as its own processes; Tests/Cluster/slurm.conf.in), with a cancelled
# task and a killed shard resumed; under a minute on 2 cores. `make test` runs it when Slurm is installed.
test-cluster: deps test-deps cluster-deps release
	$(PYTHON) Tests/Cluster/cluster_test.py --koe $(RELEASE_KOE)

cluster-deps:
	@$(call apt_install,$(CLUSTER_DEPS))

clean:
	rm -rf .build
