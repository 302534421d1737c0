// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The datapath's packet sampling as a live feed for top and events; the sampling lock record shares. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sample_tap.h"
#include "variant_swap.h"
#include "classes_map.h"
#include "safe_file.h"
#include "time_now.h"

volatile sig_atomic_t sample_tap_signal;

static void on_signal(int sig)
{
	sample_tap_signal = sig;
}

/* Who holds the lock at path, as its holder wrote it ("top 123"), or "". */
static void lock_holder(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	buf[0] = 0;
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

/* Named after the sampling ring, which a replace keeps: the next program's readers wait too. */
static int lock_at(const char *dir, const struct pacer_handle *h, char *path, size_t len)
{
	struct bpf_map_info info = {};
	uint32_t ilen = sizeof(info);

	if (bpf_obj_get_info_by_fd(h->map_fd[PACER_MAP_EVENTS], &info, &ilen))
		info.id = 0;
	snprintf(path, len, "%s/xdp-pacer-sample.ring%u.lock", dir, info.id);
	return lock_file_acquire(path, 1);
}

int sample_lock_take(const struct pacer_handle *h, const char *verb, char *path, size_t len)
{
	char who[64], line[64], holder[16], by[64] = "";
	long pid;
	int fd = lock_at("/run", h, path, len);

	if (fd < 0 && fd != -EBUSY)
		fd = lock_at("/tmp", h, path, len);
	if (fd == -EBUSY) {
		lock_holder(path, who, sizeof(who));
		if (sscanf(who, "%15s %ld", holder, &pid) == 2)
			snprintf(by, sizeof(by), " by 'xdp-pacer %s' (pid %ld)", holder, pid);
		pr_err("the sampled records of %s are already being read%s: one of record, top and events at a time per pacer",
		       h->ifname, by);
		return fd;
	}
	if (fd < 0) {
		pr_err("cannot take the sampling lock for %s: %s", h->ifname, strerror(-fd));
		return fd;
	}
	/* Best effort: the name only helps the next taker's message. */
	snprintf(line, sizeof(line), "%s %ld\n", verb, (long)getpid());
	if (ftruncate(fd, 0) || write(fd, line, strlen(line)) < 0)
		(void)0;
	return fd;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct sample_tap *t = ctx;
	struct pacer_record rec;

	if (size < offsetof(struct pacer_record, key_dport)) {
		t->short_events++;
		return 0;
	}
	memset(&rec, 0, sizeof(rec));
	memcpy(&rec, data, size < sizeof(rec) ? size : sizeof(rec));
	if (rec.family != 4 && rec.family != 6) {
		t->short_events++;
		return 0;
	}
	t->fn(t->ctx, &rec);
	/* A flood can keep one poll consuming: come back for signals and the clock now and then. */
	return sample_tap_signal ? -EINTR : 0;
}

void sample_tap_refresh_classes(struct sample_tap *t)
{
	struct pacer_class_maps m;
	uint32_t sel = __atomic_load_n(&t->h.cfg->class_sel, __ATOMIC_ACQUIRE);
	int n = 0;

	if (sel == t->class_sel && (t->nclasses || !PACER_CLASS_SEL_COUNT(sel)))
		return;
	pacer_class_maps_of(&t->h, &m);
	if (m.classes_fd < 0 || pacer_classes_read(&m, t->classes, &n))
		n = 0;
	t->nclasses = n;
	t->class_sel = sel;
}

const char *sample_tap_class_name(const struct sample_tap *t, uint32_t class_slot)
{
	int i;

	if (!class_slot)
		return "";
	for (i = 0; i < t->nclasses; i++)
		if (t->classes[i].stat_slot + 1 == class_slot)
			return t->classes[i].name;
	return "?";
}

/* On: the program made to carry sampling, then switched on; off: what was there put back. */
static int switch_sampling(struct sample_tap *t, bool on)
{
	if (on) {
		t->prev_src = t->h.cfg->sample_src_thresh;
		t->prev_pkt = t->h.cfg->sample_pkt_thresh;
		if (variant_store_sampling(&t->h, 0, t->pkt_thresh))
			return -1;
	} else {
		variant_store_sampling(&t->h, t->prev_src, t->prev_pkt);
	}
	t->sampling_on = on;
	return 0;
}

static int discard(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

int sample_tap_open(struct sample_tap *t, const char *ifname, const char *verb,
		    uint64_t pkt_thresh, sample_tap_fn fn, void *ctx)
{
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t c[PACER_STAT_MAX];
	struct ring_buffer *drain;
	char eb[128];
	int err;

	memset(t, 0, sizeof(*t));
	t->lock_fd = -1;
	t->fn = fn;
	t->ctx = ctx;
	t->pkt_thresh = pkt_thresh;
	if (pacer_handle_open(ifname, &t->h))
		return 1;
	t->handle_open = true;
	t->lock_fd = sample_lock_take(&t->h, verb, t->lock_path, sizeof(t->lock_path));
	if (t->lock_fd < 0)
		return 1;
	/* What someone else's sampling left behind is not ours. */
	drain = ring_buffer__new(t->h.map_fd[PACER_MAP_EVENTS], discard, NULL, NULL);
	t->rb = ring_buffer__new(t->h.map_fd[PACER_MAP_EVENTS], on_event, t, NULL);
	if (!drain || !t->rb) {
		err = -errno;
		ring_buffer__free(drain);
		pr_err("cannot open the ring buffer of %s: %s", t->h.ifname, err_str(err, eb, sizeof(eb)));
		return 1;
	}
	ring_buffer__consume(drain);
	ring_buffer__free(drain);
	t->counters_ok = !pacer_read_counters(&t->h, c);
	if (t->counters_ok)
		t->lost_before = c[PACER_STAT_RECORD_LOST];
	else
		pr_err("warning: cannot read the counters of %s: lost samples will not be known",
		       t->h.ifname);
	sample_tap_refresh_classes(t);
	t->real_minus_mono = (int64_t)(clock_now_ns(CLOCK_REALTIME) - pacer_clock_now(&t->h));
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &t->old_int);
	sigaction(SIGTERM, &sa, &t->old_term);
	sigaction(SIGHUP, &sa, &t->old_hup);
	t->signals_set = true;
	return switch_sampling(t, true) ? 1 : 0;
}

int sample_tap_poll(struct sample_tap *t, int timeout_ms)
{
	int err = ring_buffer__poll(t->rb, timeout_ms);

	return err == -EINTR || err >= 0 ? 0 : err;
}

bool sample_tap_attached(struct sample_tap *t)
{
	if (pacer_handle_follow(&t->h))
		return true;
	t->gone = true;
	return false;
}

uint64_t sample_tap_lost(struct sample_tap *t)
{
	uint64_t c[PACER_STAT_MAX];

	if (!t->counters_ok || pacer_read_counters(&t->h, c))
		return 0;
	return c[PACER_STAT_RECORD_LOST] - t->lost_before;
}

double sample_tap_scale(const struct sample_tap *t)
{
	return t->pkt_thresh ? 4294967296.0 / (double)t->pkt_thresh : 1.0;
}

uint64_t sample_tap_realtime(const struct sample_tap *t, uint64_t ts_ns)
{
	return (uint64_t)((int64_t)ts_ns + t->real_minus_mono);
}

void sample_tap_close(struct sample_tap *t)
{
	if (!t->handle_open)
		return; /* never opened, or closed: nothing else was taken */
	if (t->sampling_on)
		switch_sampling(t, false);
	if (t->signals_set) {
		sigaction(SIGINT, &t->old_int, NULL);
		sigaction(SIGTERM, &t->old_term, NULL);
		sigaction(SIGHUP, &t->old_hup, NULL);
		t->signals_set = false;
	}
	ring_buffer__free(t->rb);
	t->rb = NULL;
	if (t->lock_fd >= 0)
		lock_file_release(t->lock_fd, t->lock_path);
	t->lock_fd = -1;
	if (t->handle_open)
		pacer_handle_close(&t->h);
	t->handle_open = false;
}
