# xdp-pacer build: BPF objects -> skeletons -> CLI and tests, all under $(BUILD).
# `make V=1` shows the commands.

BUILD   ?= build
# The release this tree builds: --version, the metrics, the recording header,
# the .deb.  CHANGELOG.md's latest entry names the same one.
VERSION := 0.2.0
CLANG   ?= clang
BPFTOOL ?= bpftool
CC      ?= gcc
CFLAGS  ?= -O2 -g

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' '$(1)' '$(2)';
endif

# user/lib's folders by concern, bottom first: a folder's files include
# only include/, their own folder and the folders before it here
# (docs/hacking.md, Layers; tests/integ_layout.sh checks the headers too).
LIB_LAYERS := words sys traffic backend file policy out opts
# Include paths by layer: the library sees only include/ and itself (each of
# its folders only itself and the folders below it: lib_inc), the analysis
# also the library, the CLI and tests everything (skeletons too).
LIB_INC   = -Iinclude $(LIB_LAYERS:%=-Iuser/lib/%)
ANA_INC   = $(LIB_INC) -Iuser/analysis
ALL_INC   = $(ANA_INC) -Iuser/cli -Iuser -I$(BUILD)
WARN      = -Wall -Wextra -Werror -Wno-missing-field-initializers
XCFLAGS   = -std=gnu11 $(WARN) $(CFLAGS) -MMD -MP
# -target bpf drops the host's system include directories (asm/types.h sits
# in a per-architecture one on Debian); take them from clang, as
# libbpf-bootstrap does, so no distribution's layout is written here.
CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
# $(call lib_upto,DIR,$(LIB_LAYERS)): the folders up to DIR, bottom first.
lib_upto  = $(if $(2),$(firstword $(2)) $(if $(filter $(1),$(firstword $(2))),,$(call lib_upto,$(1),$(wordlist 2,$(words $(2)),$(2)))),$(error user/lib/$(1) is not in LIB_LAYERS))
# $(call lib_inc,user/lib/DIR/FILE.c): that folder's include paths.
lib_inc   = -Iinclude $(patsubst %,-Iuser/lib/%,$(call lib_upto,$(word 3,$(subst /, ,$(1))),$(LIB_LAYERS)))
BPF_CFLAGS = -g -O2 -target bpf -Wall -Werror -Iinclude -Ibpf $(CLANG_BPF_SYS_INCLUDES) -MMD -MP
PKGS      = libbpf libxdp libmicrohttpd
LIBS      = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lbpf -lxdp -lmicrohttpd) -lpcap -lelf -lz -lm
# libpacer.a reads pcap files (analyze --pcap), so its tests link libpcap too.
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lpthread) -lpcap -lm

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))
# Skeletons only for the objects the CLI embeds; the benchmark's are loaded by path.
SKELS     := $(BUILD)/xdp_pacer.skel.h $(BUILD)/gen.skel.h
# And the grace-period check's program (tests/grace_check.h), embedded in
# prog_writers_race and in grace_probe, so the qemu guests need no file for it.
TEST_SKELS := $(BUILD)/grace_probe.skel.h
# libpacer.a: the pure userspace library (user/lib, one folder per concern)
# and the offline analysis behind `analyze` (user/analysis); the CLI and
# every test link it.
LIB_SRCS  := $(wildcard user/lib/*/*.c)
ANA_SRCS  := $(wildcard user/analysis/*.c)
LIB_OBJS  := $(patsubst user/lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRCS)) \
	     $(patsubst user/analysis/%.c,$(BUILD)/analysis/%.o,$(ANA_SRCS))
LIB_A     := $(BUILD)/libpacer.a
CLI_SRCS  := $(wildcard user/*.c user/cli/*.c user/verbs/*.c user/verbs/gen/*.c)
CLI_OBJS  := $(patsubst user/%.c,$(BUILD)/cli/%.o,$(CLI_SRCS))
CLI       := $(BUILD)/xdp-pacer
# unit_*: pure userspace logic; prog_*: BPF_PROG_TEST_RUN against the real object.
UNIT_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/unit_*.c))
PROG_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/prog_*.c))
TEST_LIB_OBJS := $(patsubst tests/%.c,$(BUILD)/tests/%.o,$(wildcard tests/lib_*.c))
# Unit tests of what reads untrusted bytes (the datapath's shared parser,
# captures, configuration files), built again with UBSan over a libpacer.a
# of their own: undefined behaviour (a misaligned load of a header field)
# fails them.
SAN_BINS  := $(patsubst %,$(BUILD)/tests/san/unit_%,pktparse classify pcapng ops classconf)
SAN_FLAGS  = -fsanitize=undefined -fno-sanitize-recover=all
SAN_LIB   := $(BUILD)/san/libpacer.a
SAN_OBJS  := $(patsubst $(BUILD)/%,$(BUILD)/san/%,$(LIB_OBJS))
# The policy parsers' fuzz target (tests/fuzz/fuzz_policy.c; tests/fuzz.sh
# runs it): libFuzzer with ASan and UBSan where clang has the runtime
# (libclang-rt-14-dev), else the same target under a deterministic mutation
# loop (tests/fuzz/mutate_main.c) with gcc's ASan and UBSan.  Over a
# user/lib archive of its own, built with the same instrumentation.
FUZZ_BIN  := $(BUILD)/tests/fuzz/fuzz_policy
FUZZ_LIBFUZZER := $(wildcard $(shell $(CLANG) -print-runtime-dir 2>/dev/null)/libclang_rt.fuzzer-$(shell uname -m).a)
FUZZ_SAN   = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ifneq ($(FUZZ_LIBFUZZER),)
FUZZ_CC    = $(CLANG)
FUZZ_CFLAGS = $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_LINK  = $(FUZZ_SAN) -fsanitize=fuzzer
FUZZ_MAIN  =
else
FUZZ_CC    = $(CC)
FUZZ_CFLAGS = $(FUZZ_SAN)
FUZZ_LINK  = $(FUZZ_SAN)
FUZZ_MAIN  = tests/fuzz/mutate_main.c
endif
FUZZ_LIB  := $(BUILD)/fuzz/libpacer.a
# Measurement tools (synthetic recordings, HM timing); built with the tests.
TOOL_BINS := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(wildcard tests/tools/*.c))

.DELETE_ON_ERROR:
.SECONDARY:
# Install layout (`make install PREFIX=/usr DESTDIR=/tmp/stage`).  The BPF
# object goes where `ip link set dev X xdp obj` users find it.
PREFIX     ?= /usr/local
SYSCONFDIR ?= /etc
BINDIR     ?= $(PREFIX)/bin
BPFDIR     ?= $(PREFIX)/lib/bpf/xdp-pacer
MANDIR     ?= $(PREFIX)/share/man
UNITDIR    ?= $(PREFIX)/lib/systemd/system
COMPDIR    ?= $(PREFIX)/share/bash-completion/completions
DOCDIR     ?= $(PREFIX)/share/doc/xdp-pacer
LIBEXECDIR ?= $(PREFIX)/libexec

.PHONY: all bpf cli tests test check unit-test prog-test integration-test demo bench clean deps install deb fuzz

all: bpf cli tests

bpf: $(BPF_OBJS) $(SKELS) $(TEST_SKELS)
cli: $(CLI)
tests: $(UNIT_BINS) $(PROG_BINS) $(TOOL_BINS) $(SAN_BINS) $(FUZZ_BIN)

$(BUILD)/%.bpf.o: bpf/%.bpf.c | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(BUILD)/lib/%.o: user/lib/%.c | $(BUILD)/lib
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(call lib_inc,$<) $(CPPFLAGS) $(XCFLAGS) -c $< -o $@

$(BUILD)/analysis/%.o: user/analysis/%.c | $(BUILD)/analysis
	$(call msg,CC,$@)
	$(Q)$(CC) $(ANA_INC) $(CPPFLAGS) $(XCFLAGS) -c $< -o $@

$(BUILD)/lib/sys/version.o $(BUILD)/san/lib/sys/version.o $(BUILD)/fuzz/lib/sys/version.o: CPPFLAGS += -DPACER_VERSION='"$(VERSION)"'
$(BUILD)/lib/sys/version.o: Makefile

$(LIB_A): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/cli/%.o: user/%.c | $(BUILD)/cli $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_INC) $(CPPFLAGS) $(XCFLAGS) -c $< -o $@

# Where libxdp finds xdp-dispatcher.o unless LIBXDP_OBJECT_PATH says (its
# BPF_OBJECT_PATH, $(LIBDIR)/bpf as built): the replace builds a dispatcher too.
LIBXDP_OBJECT_DIR := $(or $(shell pkg-config --variable=libdir libxdp 2>/dev/null),/usr/lib/x86_64-linux-gnu)/bpf
$(BUILD)/cli/cli/xdp_replace.o: CPPFLAGS += -DLIBXDP_OBJECT_DIR='"$(LIBXDP_OBJECT_DIR)"'

$(CLI): $(CLI_OBJS) $(LIB_A)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/%.o: tests/%.c | $(BUILD)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_INC) $(CPPFLAGS) -Itests $(XCFLAGS) -c $< -o $@

# Only the BPF_PROG_TEST_RUN tests embed skeletons; unit tests build without clang.
$(PROG_BINS:%=%.o): | $(SKELS) $(TEST_SKELS)

$(BUILD)/tests/unit_%: $(BUILD)/tests/unit_%.o $(TEST_LIB_OBJS) $(LIB_A)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(CHECK_LIBS)

$(BUILD)/tests/prog_%: $(BUILD)/tests/prog_%.o $(TEST_LIB_OBJS) $(LIB_A)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(CHECK_LIBS) $(LIBS)

$(BUILD)/san/lib/%.o: user/lib/%.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(call lib_inc,$<) $(CPPFLAGS) $(XCFLAGS) $(SAN_FLAGS) -c $< -o $@

$(BUILD)/san/analysis/%.o: user/analysis/%.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ANA_INC) $(CPPFLAGS) $(XCFLAGS) $(SAN_FLAGS) -c $< -o $@

$(SAN_LIB): $(SAN_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/tests/san/unit_%: tests/unit_%.c $(SAN_LIB) | $(BUILD)/tests/san
	$(call msg,CC-SAN,$@)
	$(Q)$(CC) $(ALL_INC) $(CPPFLAGS) -Itests $(XCFLAGS) $(SAN_FLAGS) -o $@ $< $(SAN_LIB) $(CHECK_LIBS)

$(BUILD)/fuzz/lib/%.o: user/lib/%.c
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(call lib_inc,$<) $(CPPFLAGS) $(XCFLAGS) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_LIB): $(patsubst user/lib/%.c,$(BUILD)/fuzz/lib/%.o,$(LIB_SRCS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(FUZZ_BIN): tests/fuzz/fuzz_policy.c $(FUZZ_MAIN) $(FUZZ_LIB) Makefile
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(ALL_INC) $(CPPFLAGS) $(XCFLAGS) $(FUZZ_LINK) -o $@ $< $(FUZZ_MAIN) $(FUZZ_LIB) -lm

# A longer fuzzing run than the tests' (docs/hacking.md, Fuzzing): FUZZ_TIME seconds.
fuzz: $(FUZZ_BIN)
	$(Q)BUILD=$(BUILD) tests/fuzz.sh --time $(or $(FUZZ_TIME),600)

$(BUILD)/tests/tools/%: tests/tools/%.c $(LIB_A) | $(BUILD)/tests/tools
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_INC) $(CPPFLAGS) $(XCFLAGS) -o $@ $< $(LIB_A) -lm

# The benchmark's filler of class and list maps (scripts/bench.py) calls into libbpf.
$(BUILD)/tests/tools/classes_fill: tests/tools/classes_fill.c $(LIB_A) | $(BUILD)/tests/tools
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_INC) $(CPPFLAGS) $(XCFLAGS) -o $@ $< $(LIB_A) $(LIBS)

# Whether a class install's wait outlasts a program in flight (tests/qemu_guest.sh):
# its program's skeleton, tests/grace_check.h, libbpf.
$(BUILD)/tests/tools/grace_probe: tests/tools/grace_probe.c $(LIB_A) | $(TEST_SKELS) $(BUILD)/tests/tools
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_INC) $(CPPFLAGS) -Itests $(XCFLAGS) -o $@ $< $(LIB_A) $(LIBS) -lpthread

# Replaces an XDP program in place, alone and in libxdp's dispatcher
# (tests/integ_replace.sh, tests/qemu_guest.sh): the CLI's xdp_replace.c, libbpf, libxdp.
REPLACE_CHECK_OBJS := $(BUILD)/cli/cli/xdp_replace.o $(BUILD)/cli/cli/cli_log.o
$(BUILD)/tests/tools/xdp_replace_check: tests/tools/xdp_replace_check.c $(REPLACE_CHECK_OBJS) $(LIB_A) | $(BUILD)/tests/tools
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_INC) $(CPPFLAGS) $(XCFLAGS) -o $@ $< $(REPLACE_CHECK_OBJS) $(LIB_A) $(LIBS) -lpthread

# Runs a loaded program by BPF_PROG_TEST_RUN (scripts/bench-testrun.sh --sources): libbpf.
$(BUILD)/tests/tools/testrun_sources: tests/tools/testrun_sources.c $(LIB_A) | $(BUILD)/tests/tools
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_INC) $(CPPFLAGS) $(XCFLAGS) -o $@ $< $(LIB_A) $(LIBS)

# Loads the object (its probe program): needs the skeleton and libbpf.
$(BUILD)/tests/tools/sweep_cost: tests/tools/sweep_cost.c $(LIB_A) | $(SKELS) $(BUILD)/tests/tools
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_INC) $(CPPFLAGS) $(XCFLAGS) -o $@ $< $(LIB_A) $(LIBS)

# Watches which XDP program an interface runs through a replace (tests/integ_restart.sh): libbpf.
$(BUILD)/tests/tools/xdp_watch: tests/tools/xdp_watch.c | $(BUILD)/tests/tools
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_INC) $(CPPFLAGS) $(XCFLAGS) -o $@ $< $(LIBS)

# A Check suite with known results: what tests/integ_runner.sh counts.
$(BUILD)/tests/tools/check_fixture: tests/tools/check_fixture.c | $(BUILD)/tests/tools
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_INC) $(CPPFLAGS) -Itests $(XCFLAGS) -o $@ $< $(CHECK_LIBS)

$(BUILD) $(BUILD)/lib $(BUILD)/analysis $(BUILD)/cli $(BUILD)/tests $(BUILD)/tests/tools $(BUILD)/tests/san:
	$(Q)mkdir -p $@

# Tests: unit (no privileges), BPF_PROG_TEST_RUN (root), then veth/netns
# integration (root).  tests/run.sh prints the summary line.
test: all
	$(Q)BUILD=$(BUILD) tests/run.sh

# The inner loop: unit tests without the BPF build and without the test
# cases tagged slow (tests/check_run.h).  unit-test runs them all.
check: $(UNIT_BINS) $(SAN_BINS) $(FUZZ_BIN)
	$(Q)CK_EXCLUDE_TAGS=slow BUILD=$(BUILD) tests/run.sh unit

unit-test: $(UNIT_BINS) $(SAN_BINS) $(FUZZ_BIN)
	$(Q)BUILD=$(BUILD) tests/run.sh unit

prog-test: all
	$(Q)BUILD=$(BUILD) tests/run.sh prog

integration-test: all
	$(Q)BUILD=$(BUILD) tests/run.sh integration

demo: all
	$(Q)BUILD=$(BUILD) scripts/demo.sh

bench: all
	$(Q)BUILD=$(BUILD) scripts/bench.sh $(BENCH_ARGS)

# Installing is asked for, never a side effect of building (scripts/demo.sh
# and scripts/test.sh run it first).
deps:
	$(Q)scripts/deps.sh

# The units and the feeds' files (CrowdSec's custom bouncer and fail2ban
# feeding the deny list, docs/operating.md) name the installed binary and
# directories.
INSTALL_SUBST = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	-e 's|@LIBEXECDIR@|$(LIBEXECDIR)|g'
install: $(CLI) $(BUILD)/xdp_pacer.bpf.o
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -D -m 0755 $(CLI) $(DESTDIR)$(BINDIR)/xdp-pacer
	$(Q)install -D -m 0644 $(BUILD)/xdp_pacer.bpf.o $(DESTDIR)$(BPFDIR)/xdp_pacer.bpf.o
	$(Q)install -D -m 0644 dist/xdp-pacer.8 $(DESTDIR)$(MANDIR)/man8/xdp-pacer.8
	$(Q)install -d $(DESTDIR)$(UNITDIR)
	$(Q)for u in xdp-pacer@.service xdp-pacer-exporter.service xdp-pacer-events@.service; do \
		$(INSTALL_SUBST) dist/$$u.in > $(DESTDIR)$(UNITDIR)/$$u || exit 1; done
	$(Q)install -D -m 0644 dist/xdp-pacer.bash $(DESTDIR)$(COMPDIR)/xdp-pacer
	$(Q)install -D -m 0644 dist/example.conf $(DESTDIR)$(DOCDIR)/example.conf
	$(Q)install -d $(DESTDIR)$(LIBEXECDIR)/xdp-pacer $(DESTDIR)$(DOCDIR)/examples \
		$(DESTDIR)$(SYSCONFDIR)/fail2ban/action.d
	$(Q)$(INSTALL_SUBST) dist/crowdsec-decision.in > $(DESTDIR)$(LIBEXECDIR)/xdp-pacer/crowdsec-decision
	$(Q)chmod 0755 $(DESTDIR)$(LIBEXECDIR)/xdp-pacer/crowdsec-decision
	$(Q)$(INSTALL_SUBST) dist/crowdsec-custom-bouncer.yaml.local.in \
		> $(DESTDIR)$(DOCDIR)/examples/crowdsec-custom-bouncer.yaml.local
	$(Q)$(INSTALL_SUBST) dist/fail2ban-xdp-pacer.conf.in > $(DESTDIR)$(SYSCONFDIR)/fail2ban/action.d/xdp-pacer.conf

# The Debian package, $(BUILD)/xdp-pacer_$(VERSION)_ARCH.deb, from `make
# install` into a staging tree (scripts/deb.sh); check it with lintian.
deb: $(CLI) $(BUILD)/xdp_pacer.bpf.o
	$(call msg,DEB,$(BUILD)/xdp-pacer_$(VERSION)_*.deb)
	$(Q)scripts/deb.sh $(BUILD) $(VERSION) >/dev/null

clean:
	$(Q)rm -rf $(BUILD)

# Not under $(BUILD)/kernels: the unpacked packages there hold directories named *.d.
-include $(filter-out $(BUILD)/kernels/%,$(wildcard $(BUILD)/*.d $(BUILD)/*/*.d $(BUILD)/*/*/*.d $(BUILD)/*/*/*/*.d))
