# Makefile - builds build/stsd, build/stsctl, their tests and benchmarks. `make help` lists the targets.

PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
SANITIZER ?=

# Quiet build: one short line per step (warnings still shown); `make V=1` prints the
# full command lines. $(call say,CC,target) prefixes a recipe line.
ifeq ($(V),1)
say =
Q   =
else ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
say = @
Q   = @
else
say = @printf '  %-4s %s\n' '$(1)' '$(2)';
Q   = @
endif

CC      ?= cc
PKGS    := libmicrohttpd libpcre2-8 gnutls libcurl raft libuv
WARN    := -Wall -Wextra -Werror -Wformat=2 -Wstrict-prototypes -Wshadow -Wno-unused-parameter
# CFLAGS is the user's (optimisation, debug); what the build needs is added with
# override so that `make CFLAGS=-O1` keeps the include paths and warnings.
CFLAGS  ?= -O2 -g
override CFLAGS += -std=gnu11 $(WARN) -Iinclude -MMD -MP -pthread -D_GNU_SOURCE
# Tests, fuzzers and benchmarks may also reach a room's private headers (src/<room>/x.h).
TEST_INC := -Isrc -Itests
override LDLIBS += -pthread
ifneq ($(SANITIZER),)
override CFLAGS  += -fsanitize=$(SANITIZER) -fno-omit-frame-pointer -fno-sanitize-recover=all
override LDFLAGS += -fsanitize=$(SANITIZER)
endif

# Resolved only when a target that compiles runs, after deps.sh has had its say.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# Sources live in rooms (src/<room>/*.c, see src/README.md); objects mirror them.
# src/ctl/ is stsctl, the client: a program of its own, never linked into stsd.
SRCS    := $(filter-out src/app/main.c src/ctl/%,$(wildcard src/*/*.c))
# The dashboard's files (src/http/ui/) become one generated C file of byte arrays.
UI_FILES := $(wildcard src/http/ui/*)
UI_GEN  := $(BUILD)/gen/ui_assets.c
OBJS    := $(SRCS:src/%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/ui_assets.o
UNIT    := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
PROTO   := $(patsubst tests/proto/%.c,$(BUILD)/tests/%,$(wildcard tests/proto/test_*.c))
TESTLIB := $(BUILD)/obj/tests/testlib.o
# stsctl: its room, and the only server objects it links (base helpers, no server room).
# Its verbs come from the server's command table through scripts/mkctl (ctl_commands.h).
CTL_OBJS := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(wildcard src/ctl/*.c))
CTL_BASE := $(BUILD)/obj/base/buf.o $(BUILD)/obj/base/num.o $(BUILD)/obj/base/utf8.o
CTL_GEN  := $(BUILD)/gen/ctl_commands.h
CURL_CFLAGS = $(shell pkg-config --cflags libcurl 2>/dev/null)
CURL_LIBS   = $(shell pkg-config --libs libcurl 2>/dev/null)

.PHONY: all run run-cluster test-cluster test docs check-docs test-unit test-proto test-ui test-pkg test-examples test-asan test-soak test-tsan \
        test-stop test-fuzz test-ctl test-deb test-image test-image-cluster deb image deps deps-test install uninstall clean \
        help bench bench-writes bench-store bench-columns bench-cluster bench-cluster-disk fuzz test-faults soak-faults test-linear

all: deps $(BUILD)/stsd $(BUILD)/stsd.8 $(BUILD)/stsctl $(BUILD)/stsctl.1 $(BUILD)/stsctl.bash

help:
	@echo "make            build $(BUILD)/stsd and $(BUILD)/stsd.8 (V=1 prints the commands)"
	@echo "make run        build and serve the example datasets on port 9191 (conf/run.properties)"
	@echo "make run-cluster  the same on three nodes of a cluster: 9191, 9192, 9193 (raft 9291..9293),"
	@echo "                state and logs in build/run-cluster/ (scripts/run-cluster.sh)"
	@echo "make test       build, run every test: unit, protocol, install, examples, ASan+UBSan,"
	@echo "                the soaks, the stop matrix, the cluster, fuzz"
	@echo "make test-soak  ASan+UBSan stsd (leaks checked) under a mixed, messy load for 60 s,"
	@echo "                stopped and restarted (tests/soak/; SOAK_SECONDS=60)"
	@echo "make test-tsan  test_hangup and the same soak under ThreadSanitizer (build/tsan; tests/soak/tsan.supp)"
	@echo "make test-stop  SIGTERM in every state: exit 0 within 5 s, nothing answered lost (also under ASan)"
	@echo "make test-cluster  three nodes on loopback under kill -9, SIGSTOP, restarts and load: nothing"
	@echo "                answered OK lost, nothing answered twice (tests/cluster/; TESTS=name to pick,"
	@echo "                CLUSTER_FAILOVER_S=3: the longest failover allowed)"
	@echo "make test-faults  three nodes in network namespaces under partitions, kill -9, SIGSTOP,"
	@echo "                delay, clock skew, a wiped node; the history checked by rules and for"
	@echo "                linearizability (as root; 5 seeds"
	@echo "                of 60 s, SEED=n replays one; docs/faults.md)"
	@echo "make test-linear  the linearizability checker (tests/faults/linear.py) on hand-written histories"
	@echo "make soak-faults HOURS=n  the same, run after run, for n hours (as root)"
	@echo "make test-ui    the dashboard in headless Chromium (screenshots in build/ui-screens/)"
	@echo "make test-pkg   make install into a temp dir; the man page; the unit (systemd-analyze)"
	@echo "make test-examples  the curl examples, Locust and Artillery against a real stsd"
	@echo "make test-ctl   every stsctl verb against a real stsd; stsctl top under tmux"
	@echo "make deb        the Debian package in build/deb/ (dpkg-buildpackage -b -us -uc)"
	@echo "make test-deb   build the .deb, lintian, dpkg -i, run, dpkg -r, purge (as root)"
	@echo "make docs       rewrite docs/commands.md and docs/configuration.md from the tables"
	@echo "make image      the OCI image localhost/stsd:VERSION from the .deb (mmdebstrap, podman; as root)"
	@echo "make test-image the image under podman: read-only, non-root, stop, restart on its volume"
	@echo "make test-image-cluster  examples/compose.yml under podman-compose: 3 replicas, kill the leader"
	@echo "make bench      HTTP benchmark against a constant-answer ceiling (scripts/bench.sh)"
	@echo "make bench-writes  the write path's goals: cluster/lone, follower/leader, Redis, READ/ceiling"
	@echo "make bench-store  store engine benchmark (operations/s by list size, load, save, RSS)"
	@echo "make bench-cluster-disk  3 nodes for days: failover and disk against the history (LINES, CHANGES)"
	@echo "make bench-columns  FIND COLUMN= and ADD UNIQUE=column by list size, to 10M lines"
	@echo "make fuzz       run the libFuzzer harnesses longer (FUZZ_SECONDS=60)"
	@echo "make install    install to \$$DESTDIR\$$PREFIX (binary, man page, config, unit, examples)"
	@echo "make uninstall  remove them again (not /etc/stsd/sts.properties, not /var/lib/stsd)"

deps:
	@scripts/deps.sh build

deps-test:
	@scripts/deps.sh test

$(BUILD)/stsd: $(BUILD)/obj/app/main.o $(OBJS)
	$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(LDLIBS)

# stsd(8): docs/stsd.8.in with the options, keys and commands of the tables stsd runs on.
$(BUILD)/mkman: scripts/mkman.c scripts/tmpl.c $(OBJS)
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) \
		$(PKG_LIBS) $(LDLIBS)

$(BUILD)/stsd.8: docs/stsd.8.in $(BUILD)/mkman
	$(call say,GEN,$@)$(BUILD)/mkman docs/stsd.8.in > $@.tmp && mv $@.tmp $@

# docs/commands.md and docs/configuration.md: their templates with the commands, options
# and keys of the same tables. Checked in, so that they read on a forge; `make docs`
# rewrites them, `make check-docs` (in `make test`) fails when they differ.
$(BUILD)/mkdocs: scripts/mkdocs.c scripts/tmpl.c $(OBJS)
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) \
		$(PKG_LIBS) $(LDLIBS)

DOCS_GEN := docs/commands.md docs/configuration.md

docs: $(BUILD)/mkdocs
	$(Q)for d in $(DOCS_GEN); do $(BUILD)/mkdocs $$d.in > $$d.tmp && mv $$d.tmp $$d || exit 1; done
	@echo "docs: $(DOCS_GEN) written"

check-docs: $(BUILD)/mkdocs
	$(Q)for d in $(DOCS_GEN); do $(BUILD)/mkdocs $$d.in > $(BUILD)/$$(basename $$d).gen || exit 1; \
		if ! diff -u $$d $(BUILD)/$$(basename $$d).gen > $(BUILD)/$$(basename $$d).diff; then \
			echo "check-docs: $$d differs from what the tables make ($(BUILD)/$$(basename $$d).diff):"; \
			head -n 20 $(BUILD)/$$(basename $$d).diff; echo "check-docs: run 'make docs'"; exit 1; fi; done
	$(Q)for c in $$(sed -n 's/^| \[\([A-Z]*\)\].*/\1/p' docs/commands.md); do \
		grep -q "^| .*\`$$c\`.* | " README.md || { echo "check-docs: README.md's table of commands lacks $$c"; exit 1; }; done
	$(Q)n=$$(wc -l < README.md); [ $$n -le 200 ] || { echo "check-docs: README.md has $$n lines (200 at most: the rest goes to docs/)"; exit 1; }
	@echo "check-docs: $(DOCS_GEN) match the command and key tables; README.md lists every command in $$(wc -l < README.md) lines"

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(call say,CC,$@)$(CC) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

# stsctl's room: libcurl's flags, the generated rows; none of the server's packages.
$(BUILD)/obj/ctl/%.o: src/ctl/%.c
	@mkdir -p $(@D)
	$(call say,CC,$@)$(CC) $(CFLAGS) $(CURL_CFLAGS) -I$(BUILD)/gen -c -o $@ $<

$(BUILD)/obj/ctl/ctl_main.o: $(CTL_GEN)

# The verbs, stsctl(1) and the completion, from the rows of src/cmd/command.c.
$(BUILD)/mkctl: scripts/mkctl.c $(OBJS) $(BUILD)/obj/ctl/ctl_table.o $(BUILD)/obj/ctl/ctl_doc.o
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(PKG_CFLAGS) -Isrc $(LDFLAGS) -o $@ $(filter %.c %.o,$^) \
		$(PKG_LIBS) $(LDLIBS)

$(CTL_GEN): $(BUILD)/mkctl
	@mkdir -p $(@D)
	$(call say,GEN,$@)$(BUILD)/mkctl header > $@.tmp && mv $@.tmp $@

$(BUILD)/stsctl.1: docs/stsctl.1.in $(BUILD)/mkctl
	$(call say,GEN,$@)$(BUILD)/mkctl man docs/stsctl.1.in > $@.tmp && mv $@.tmp $@

$(BUILD)/stsctl.bash: $(BUILD)/mkctl
	$(call say,GEN,$@)$(BUILD)/mkctl bash > $@.tmp && mv $@.tmp $@

$(BUILD)/stsctl: $(CTL_OBJS) $(CTL_BASE)
	$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $^ $(CURL_LIBS) $(LDLIBS)

$(UI_GEN): scripts/ui-embed.sh $(UI_FILES)
	@mkdir -p $(@D)
	$(call say,GEN,$@)scripts/ui-embed.sh src/http/ui $@

$(BUILD)/obj/gen/ui_assets.o: $(UI_GEN)
	@mkdir -p $(@D)
	$(call say,CC,$@)$(CC) $(CFLAGS) -Isrc/http -c -o $@ $<

$(BUILD)/obj/tests/%.o: tests/%.c | $(BUILD)/obj/tests
	$(call say,CC,$@)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(TEST_INC) -c -o $@ $<

# $^ also holds the headers the .d files name: only sources and objects go to the linker.
$(BUILD)/tests/%: tests/unit/%.c $(OBJS) $(TESTLIB) | $(BUILD)/tests
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(TEST_INC) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) \
		$(PKG_LIBS) -lcmocka $(LDLIBS)

$(BUILD)/tests/%: tests/proto/%.c $(OBJS) $(TESTLIB) | $(BUILD)/tests
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(TEST_INC) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) \
		$(PKG_LIBS) -lcmocka $(LDLIBS)

# The stop matrix (tests/stop/, make test-stop): protocol tests too slow for test-proto.
$(BUILD)/tests/%: tests/stop/%.c $(OBJS) $(TESTLIB) | $(BUILD)/tests
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(TEST_INC) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) \
		$(PKG_LIBS) -lcmocka $(LDLIBS)

# The fsync-failure shim test_faults preloads into stsd (plain C whatever the build).
$(BUILD)/tests/libfailsync.so: tests/proto/failsync.c | $(BUILD)/tests
	$(CC) -O2 -Wall -Wextra -Werror -shared -fPIC -o $@ $< -ldl

# The slow-resume shim test_hangup preloads: each resume returns 40 ms late (issue 35).
$(BUILD)/tests/libslowresume.so: tests/proto/slowresume.c | $(BUILD)/tests
	$(CC) -O2 -Wall -Wextra -Werror -shared -fPIC -o $@ $< -ldl

# test_ctl: stsctl's JSON reader, naming rules, printing and top's tables (no libcurl).
$(BUILD)/tests/test_ctl: $(BUILD)/obj/ctl/ctl_json.o $(BUILD)/obj/ctl/ctl_table.o \
	$(BUILD)/obj/ctl/ctl_out.o $(BUILD)/obj/ctl/ctl_doc.o $(BUILD)/obj/ctl/ctl_frame.o

# test_commands reads the stsd(8) generated from the command table.
$(BUILD)/tests/test_commands: $(BUILD)/stsd.8

$(BUILD)/obj $(BUILD)/obj/tests $(BUILD)/tests:
	$(Q)mkdir -p $@

# The example datasets loaded, in the foreground; RUN_ARGS adds options (--port 9393).
run: all
	@$(BUILD)/stsd --config conf/run.properties $(RUN_ARGS)

# Three nodes of a cluster on this machine over the example datasets, until ENTER or Ctrl-C.
run-cluster: all
	@scripts/run-cluster.sh $(BUILD)/stsd

test: deps-test
	@scripts/spdx.sh
	@scripts/check-layers.sh
	$(Q)$(MAKE) --no-print-directory check-docs
	$(Q)$(MAKE) --no-print-directory test-unit test-proto
	$(Q)$(MAKE) --no-print-directory test-linear
	$(Q)$(MAKE) --no-print-directory test-stop
	$(Q)$(MAKE) --no-print-directory test-cluster
	$(Q)$(MAKE) --no-print-directory test-faults FAULT_SEEDS=$(CI_FAULT_SEEDS)
	$(Q)$(MAKE) --no-print-directory test-ui
	$(Q)$(MAKE) --no-print-directory test-pkg test-examples test-ctl
	$(Q)$(MAKE) --no-print-directory test-deb
	$(Q)$(MAKE) --no-print-directory test-image
	$(Q)$(MAKE) --no-print-directory test-image-cluster
	$(Q)$(MAKE) --no-print-directory test-asan
	$(Q)$(MAKE) --no-print-directory test-soak
	$(Q)$(MAKE) --no-print-directory test-tsan
	$(Q)$(MAKE) --no-print-directory test-fuzz

test-unit: $(UNIT)
	@tests/run-tests.sh unit $(UNIT)

test-proto: $(BUILD)/stsd $(PROTO) $(BUILD)/tests/libfailsync.so $(BUILD)/tests/libslowresume.so
	@STSD=$(BUILD)/stsd tests/run-tests.sh protocol $(PROTO)

# SIGTERM in every state (a 10M-line INITFILE, a 50 MB upload, 2,000 waiters, a million
# leases, failing fsyncs, a compaction): exit 0 within 5 s, nothing answered lost; and
# the terminal under tmux (stsd & never stopped by it, ENTER in the foreground).
test-stop: $(BUILD)/stsd $(BUILD)/tests/test_stop $(BUILD)/tests/libfailsync.so
	@STSD=$(BUILD)/stsd tests/run-tests.sh stop $(BUILD)/tests/test_stop
	@STSD=$(BUILD)/stsd tests/stop/test-terminal.sh

# Replicas (tests/cluster/test_cluster.py): three real nodes on loopback; kill -9 of the
# leader under load, SIGSTOP, a node back from a raft snapshot, leases and ONCE over a
# failover, SAVE on every node, a rolling restart, bad cluster keys. Each test in a process
# group of its own, bounded in time; the failed ones' directories kept under /tmp.
test-cluster: $(BUILD)/stsd
	@python3 tests/cluster/test_cluster.py $(BUILD)/stsd $(TESTS)

# The fault checker (tests/faults/, docs/faults.md): three nodes, each in a network
# namespace of its own, 16 clients and a nemesis for FAULT_SECONDS (60) per seed, then the
# history checked. FAULT_RUNS (5) seeds from a random base; SEED=n replays one. As root;
# anyone else gets a failure, not a skip.
FAULT_SECONDS ?= 60
FAULT_RUNS ?= 5
# make test's seeds: a fixed set that passed, so that CI says whether a change broke what
# held; `make test-faults` alone (fresh seeds) and soak-faults explore new schedules.
CI_FAULT_SEEDS ?= 372921,372923,372924,372925,79416
test-faults: $(BUILD)/stsd
	@python3 tests/faults/faults.py $(BUILD)/stsd --seconds $(FAULT_SECONDS) \
		$(if $(SEED),--seed $(SEED),$(if $(FAULT_SEEDS),--seeds $(FAULT_SEEDS),--runs $(FAULT_RUNS)))

# The fault runs' linearizability checker against histories written by hand, the classic
# ones among them, linearizable and not (no server).
test-linear:
	@python3 tests/faults/test_linear.py

# By hand: run after run of the fault checker for HOURS (1), stopping at the first failure.
soak-faults: $(BUILD)/stsd
	@python3 tests/faults/faults.py $(BUILD)/stsd --seconds $${FAULT_SECONDS:-120} \
		--hours $${HOURS:-1} $(if $(SEED),--seed $(SEED))

# make install into a temp DESTDIR, stsd(8) through groff, the unit through systemd-analyze.
test-pkg: all
	@tests/pkg/test-install.sh

# stsctl against a real stsd: every verb, raw and --json, exit statuses, load's progress
# bar on a tty only, top under tmux.
test-ctl: $(BUILD)/stsd $(BUILD)/stsctl
	@STSD=$(BUILD)/stsd STSCTL=$(BUILD)/stsctl tests/ctl/test-stsctl.sh

# The Debian package (debian/): dpkg-buildpackage, then the .deb and its .buildinfo and
# .changes moved from .. into $(BUILD)/deb/.
deb:
	@scripts/deps.sh deb
	@scripts/mkdeb.sh $(BUILD)/deb

# As root: make deb, its file list, lintian, dpkg -i, stsd --version, stsctl --help,
# dpkg -r (the conffile stays), dpkg --purge (nothing stays).
test-deb: deps-test
	@tests/pkg/test-deb.sh $(BUILD)/deb

# The OCI image localhost/stsd:VERSION and :latest (scripts/mkimage.sh): a Debian 12 root
# filesystem by mmdebstrap holding the .deb (made first when older than the tree) and its
# run-time libraries, imported by podman, conf/Containerfile's HEALTHCHECK on top. Cached
# in build/image/.
image:
	@scripts/deps.sh image
	@scripts/mkimage.sh

# As root: the image under podman: non-root PID 1, read-only root, INITFILE/READ/ADD on the
# published port, HEALTHCHECK, podman stop (exit 0 within 5 s), a restart on the volume.
test-image: deps-test
	@tests/pkg/test-image.sh

# As root: examples/compose.yml under podman-compose, three replicas from the same image
# finding each other by service name: a leader, ADD and READ through followers, the
# leader's container killed (a new leader within 5 s, nothing acknowledged lost), started
# again (a follower again), podman stop, everything removed.
test-image-cluster: deps-test
	@tests/pkg/test-image-cluster.sh

# examples/ against a real stsd: the curl scripts, Locust headless for a few seconds (the
# shared-state example too), Artillery (npm installs it once into $(BUILD)/npm), the
# JMeter plans replayed without JMeter (stsd-plan.jmx as two engines: one loads the lists).
test-examples: $(BUILD)/stsd
	@STSD=$(BUILD)/stsd NPM_DIR=$(BUILD)/npm tests/examples/test-examples.sh

# The dashboard in headless Chromium (tests/ui/); a skip (failing under CI=true) without it.
test-ui: $(BUILD)/stsd
	@tests/ui/run.sh $(BUILD)/stsd

test-asan:
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan SANITIZER=address,undefined CFLAGS="-O1 -g" \
		test-unit test-proto test-stop
	@# The replicas under ASan+UBSan: leaks are reported by the nodes stopped with SIGTERM.
	@ASAN_OPTIONS="detect_leaks=1:halt_on_error=1" CLUSTER_FAILOVER_S=10 \
		python3 tests/cluster/test_cluster.py build/asan/stsd test_every_command_through_each_node \
		test_rolling_restart test_replace_node_under_load test_save_writes_on_all_three \
		test_compaction_bounds_directories test_standby_serves_from_memory \
		test_deposed_leader_keeps_process test_follower_reads test_batched_forwards \
		test_late_forward_never_runs test_dead_node_shown_dead

# The soak (tests/soak/soak.py): a sanitizer build under every command and every kind of
# bad client for SOAK_SECONDS (60), stopped with SIGTERM and restarted on its state.
test-soak:
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan SANITIZER=address,undefined CFLAGS="-O1 -g" \
		build/asan/stsd
	@tests/soak/run.sh asan build/asan/stsd

# Under ThreadSanitizer: test_hangup (deadlines firing as clients hang up, issue 35),
# then the soak.
test-tsan:
	$(Q)$(MAKE) --no-print-directory BUILD=build/tsan SANITIZER=thread CFLAGS="-O1 -g" build/tsan/stsd \
		build/tsan/tests/test_hangup build/tsan/tests/libslowresume.so
	@STSD=build/tsan/stsd TSAN_OPTIONS="halt_on_error=0:exitcode=66" \
		tests/run-tests.sh tsan build/tsan/tests/test_hangup
	@tests/soak/run.sh tsan build/tsan/stsd
	@# The replicas' threads (raft's loop, its hooks, the forwarder, the journal's writer,
	@# the followers' standbys).
	@TSAN_OPTIONS="halt_on_error=0:suppressions=$(CURDIR)/tests/soak/tsan.supp" \
		CLUSTER_FAILOVER_S=15 python3 tests/cluster/test_cluster.py build/tsan/stsd \
		test_kill_leader_under_load test_paused_leader test_replace_node_under_load \
		test_compaction_bounds_directories test_standby_serves_from_memory \
		test_deposed_leader_keeps_process test_follower_reads test_batched_forwards

bench: all $(BUILD)/ceiling $(BUILD)/bench-queues $(BUILD)/bench-keys $(BUILD)/bench-barrier $(BUILD)/fsync-floor \
		$(BUILD)/tests/libfailsync.so
	scripts/bench.sh

# Key watchers' wake latency (scripts/bench.sh's keys-wake row): its own stsd, on testlib.
$(BUILD)/bench-keys: scripts/bench-keys.c $(TESTLIB) | $(BUILD)/obj
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(TEST_INC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# ADDMULTI against single ADDs (docs/benchmarks.md): its own stsd, on testlib.
$(BUILD)/bench-addmulti: scripts/bench-addmulti.c $(TESTLIB) | $(BUILD)/obj
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(TEST_INC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Waiting and leases (scripts/bench.sh runs it last): its own stsd, on testlib.
$(BUILD)/bench-queues: scripts/bench-queues.c $(TESTLIB) | $(BUILD)/obj
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(TEST_INC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Barriers: release skew of 1,000 parties from 4 processes, 10,000 parked arrivals.
$(BUILD)/bench-barrier: scripts/bench-barrier.c $(TESTLIB) | $(BUILD)/obj
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(TEST_INC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

bench-store: deps
	$(Q)$(MAKE) --no-print-directory $(BUILD)/bench-store
	$(BUILD)/bench-store

$(BUILD)/bench-store: scripts/bench-store.c $(OBJS)
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(TEST_INC) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) $(PKG_LIBS) $(LDLIBS)

# FIND COLUMN= and ADD UNIQUE=column by list size, to 10M lines (docs/benchmarks.md).
# The write path's ratios against their goals, from one run (docs/benchmarks.md).
bench-writes: all $(BUILD)/ceiling $(BUILD)/fsync-floor $(BUILD)/tests/libfailsync.so
	scripts/bench-writes.sh $(ROUNDS)

# Three nodes on this machine: failover, switchover, a write's cost, proxied reads.
bench-cluster: all
	@scripts/bench-cluster.py $(BUILD)/stsd $(KILLS)

# A cluster that runs for days: failover and disk against 1M lines and 400k changes, a
# lone stsd's disk after the same work, a new node caught up at two history lengths.
bench-cluster-disk: all
	@scripts/bench-cluster-disk.py $(BUILD)/stsd $(or $(LINES),1000000) $(or $(CHANGES),200000) $(or $(KILLS),3)

bench-columns: deps
	$(Q)$(MAKE) --no-print-directory $(BUILD)/bench-columns
	$(BUILD)/bench-columns

$(BUILD)/bench-columns: scripts/bench-columns.c $(OBJS)
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(TEST_INC) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) $(PKG_LIBS) $(LDLIBS)

# What a scrape's per-list locks cost a READ beside it (README, Watching).
$(BUILD)/scrape-locks: scripts/scrape-locks.c $(OBJS)
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(TEST_INC) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) $(PKG_LIBS) $(LDLIBS)

# What one fdatasync costs here (the floor under the durability rows).
$(BUILD)/fsync-floor: scripts/fsync-floor.c | $(BUILD)/obj
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LDLIBS)

$(BUILD)/ceiling: scripts/ceiling.c $(OBJS)
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(TEST_INC) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) $(PKG_LIBS) $(LDLIBS)

# libFuzzer harnesses (clang): every src object but main, rebuilt with the fuzzer's
# instrumentation. `make test` runs each for FUZZ_SECONDS (10); `make fuzz` for 60.
FUZZ_SECONDS ?= 10
FUZZ_DIR  := build/fuzz
FUZZ_CFLAGS := -std=gnu11 -g -O1 -Iinclude -MMD -MP -pthread -D_GNU_SOURCE \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
FUZZERS   := $(patsubst tests/fuzz/%.c,$(FUZZ_DIR)/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_OBJS := $(SRCS:src/%.c=$(FUZZ_DIR)/obj/%.o) $(FUZZ_DIR)/obj/gen/ui_assets.o

$(FUZZ_DIR)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(call say,CC,$@)clang $(FUZZ_CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(FUZZ_DIR)/obj/gen/ui_assets.o: $(FUZZ_DIR)/gen/ui_assets.c
	@mkdir -p $(@D)
	$(call say,CC,$@)clang $(FUZZ_CFLAGS) -Isrc/http -c -o $@ $<

$(FUZZ_DIR)/gen/ui_assets.c: scripts/ui-embed.sh $(UI_FILES)
	@mkdir -p $(@D)
	$(call say,GEN,$@)scripts/ui-embed.sh src/http/ui $@

$(FUZZ_DIR)/%: tests/fuzz/%.c $(FUZZ_OBJS)
	$(call say,CCLD,$@)clang $(FUZZ_CFLAGS) -fsanitize=fuzzer $(PKG_CFLAGS) $(TEST_INC) -o $@ $(filter %.c %.o,$^) \
		$(PKG_LIBS) -lm

$(FUZZ_DIR)/obj:
	$(Q)mkdir -p $@

# stsctl's JSON reader and printing: objects of src/ctl/ beside the server's.
$(FUZZ_DIR)/fuzz_ctl_json: $(FUZZ_DIR)/obj/ctl/ctl_json.o $(FUZZ_DIR)/obj/ctl/ctl_out.o

test-fuzz: $(FUZZERS)
	@tests/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZERS)

fuzz:
	$(Q)$(MAKE) --no-print-directory test-fuzz FUZZ_SECONDS=$${FUZZ_SECONDS:-60}

# Where `make install` puts things; DESTDIR is prepended to all of them (packaging).
SYSCONFDIR ?= /etc
UNITDIR    ?= /lib/systemd/system
MANDIR     ?= $(PREFIX)/share/man
DATADIR    := $(PREFIX)/share/stsd
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
INSTALLED  := $(PREFIX)/bin/stsd $(MANDIR)/man8/stsd.8 $(UNITDIR)/stsd.service \
	$(PREFIX)/bin/stsctl $(MANDIR)/man1/stsctl.1 $(COMPLETIONDIR)/stsctl \
	$(DATADIR)/sts.properties.sample $(DATADIR)/datasets/README.md \
	$(addprefix $(DATADIR)/,$(wildcard datasets/*.csv examples/*))

install: all
	$(Q)install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(COMPLETIONDIR) \
		$(DESTDIR)$(SYSCONFDIR)/stsd $(DESTDIR)$(DATADIR)/datasets $(DESTDIR)$(DATADIR)/examples
	$(call say,INST,$(DESTDIR)$(PREFIX)/bin/stsd)install -m 0755 $(BUILD)/stsd $(DESTDIR)$(PREFIX)/bin/stsd
	$(call say,INST,$(DESTDIR)$(MANDIR)/man8/stsd.8)install -m 0644 $(BUILD)/stsd.8 $(DESTDIR)$(MANDIR)/man8/stsd.8
	$(call say,INST,$(DESTDIR)$(PREFIX)/bin/stsctl)install -m 0755 $(BUILD)/stsctl $(DESTDIR)$(PREFIX)/bin/stsctl
	$(Q)install -m 0644 $(BUILD)/stsctl.1 $(DESTDIR)$(MANDIR)/man1/stsctl.1
	$(Q)install -m 0644 $(BUILD)/stsctl.bash $(DESTDIR)$(COMPLETIONDIR)/stsctl
	$(call say,INST,$(DESTDIR)$(DATADIR))install -m 0644 conf/sts.properties $(DESTDIR)$(DATADIR)/sts.properties.sample
	$(Q)install -m 0644 datasets/README.md datasets/*.csv $(DESTDIR)$(DATADIR)/datasets/
	$(Q)if [ -n "$(wildcard examples/*)" ]; then \
		install -m 0644 $(wildcard examples/*) $(DESTDIR)$(DATADIR)/examples/; fi
	$(Q)for f in $(wildcard examples/*.sh); do \
		chmod 0755 $(DESTDIR)$(DATADIR)/$$f; done   # scripts (#!): runnable where installed
	$(Q)[ -e $(DESTDIR)$(SYSCONFDIR)/stsd/sts.properties ] || \
		{ sed -e 's|^#\(jmeterPlugin\.sts\.datasetDirectory\)=.*|\1=/var/lib/stsd|' \
		      -e 's|^\(jmeterPlugin\.sts\.daemon\)=false$$|\1=true|' \
		      conf/sts.properties > $(DESTDIR)$(SYSCONFDIR)/stsd/sts.properties && \
		  chmod 0644 $(DESTDIR)$(SYSCONFDIR)/stsd/sts.properties; }
	$(call say,INST,$(DESTDIR)$(UNITDIR)/stsd.service)sed 's|@PREFIX@|$(PREFIX)|g; s|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		conf/stsd.service > $(DESTDIR)$(UNITDIR)/stsd.service
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/stsd.service

# Removes what install put, but not $(SYSCONFDIR)/stsd/sts.properties (your settings)
# nor /var/lib/stsd (your data).
uninstall:
	$(call say,RM,$(DESTDIR)$(PREFIX) stsd files)rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	$(Q)rmdir $(DESTDIR)$(DATADIR)/examples $(DESTDIR)$(DATADIR)/datasets $(DESTDIR)$(DATADIR) \
		2>/dev/null || true

clean:
	rm -rf build

.SECONDARY: $(TESTLIB) $(FUZZ_OBJS)

-include $(wildcard $(BUILD)/obj/*/*.d $(BUILD)/obj/tests/*.d $(BUILD)/tests/*.d \
	$(FUZZ_DIR)/obj/*/*.d $(FUZZ_DIR)/*.d)
