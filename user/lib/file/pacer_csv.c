// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A recording as CSV (pacer_file.h): its header's comment lines and one row per record. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include "pacer_file.h"
#include "pacer_file_internal.h"
#include "backend.h"
#include "pacer_names.h"
#include "pacer_table.h"
#include "pacer_ticks.h"
#include "pacer_rate.h"
#include "version.h"

/* ---- CSV ---- */

const char *pacer_record_source(const struct pacer_record *r, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(r->family == 4 ? AF_INET : AF_INET6, r->addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	snprintf(buf, len, "%s/%u", a, r->prefix);
	return buf;
}

const char *pacer_file_action_name(uint32_t action)
{
	static const char *const names[] = { "pace", "pass", "drop" };

	return action < PACER_ACTION_MAX ? names[action] : "?";
}

const char *pacer_file_key_name(uint32_t key_mode)
{
	static const char *const names[] = { "src", "src+dport", "src+dst" };

	return key_mode < PACER_KEY_MAX ? names[key_mode] : "?";
}

const char *pacer_record_class_name(const struct pacer_file_header *h, uint32_t class_slot)
{
	const struct pacer_class *c = pacer_file_class_of(h, class_slot);

	return c ? c->name : class_slot ? "?" : "";
}

int pacer_csv_write_header(FILE *f, const struct pacer_file_header *h)
{
	uint32_t i;
	int n;

	errno = 0;
	n = fprintf(f,
		    "# xdp-pacer recording, format %u.%u\n"
		    "# writer: %s\n"
		    "# interface: %s\n# host: %s\n"
		    "# interval_ns: %" PRIu64 "\n# thresh_ticks: %u\n# tick_ns: %" PRIu64 "\n"
		    "# backend: %s, on full: %s\n"
		    "# sketch: rows %u, lines_log2 %u, layout %s, %u-byte lines of %u %u-bit cells, epoch 2^%u ticks\n"
		    "# policy: %s\n# placement: %s\n# clock: %s\n# prefix4: %u\n# prefix6: %u\n# ncpus: %u\n"
		    "# sample_src_thresh: %" PRIu64 " (of 2^32)\n# sample_pkt_thresh: %" PRIu64 " (of 2^32)\n"
		    "# start_mono_ns: %" PRIu64 "\n# start_real_ns: %" PRIu64 "\n",
		    h->version_major, h->version_minor, h->writer[0] ? h->writer : "unknown",
		    h->ifname, h->hostname, h->interval_ns,
		    h->thresh_ticks, (uint64_t)pacer_tick_ns(h->tick_shift), backend_name(h->backend),
		    on_full_name(h->on_full), h->rows, h->lines_log2,
		    layout_name(h->kind), h->line_bytes, h->line_cells, h->cell_bits,
		    h->epoch_shift, policy_name(h->policy),
		    placement_name(h->placement), clock_name(h->clock),
		    h->prefix4, h->prefix6, h->ncpus, h->sample_src_thresh, h->sample_pkt_thresh,
		    h->start_mono_ns, h->start_real_ns);
	if (n >= 0 && h->lines)
		n = fprintf(f, "# dense: %u lines\n", h->lines);
	if (n >= 0 && h->rate_n > 1)
		n = fprintf(f, "# rate_n: %u (interval_ns is T of --rate N/T)\n# burst_ticks: %u\n",
			    h->rate_n, h->burst_ticks);
	for (i = 0; n >= 0 && i < h->n_classes; i++) {
		const struct pacer_class *c = &h->classes[i];

		n = fprintf(f, "# class %u: %s, slot %u, action %s, key %s, prefix4 %u, prefix6 %u, policy %s, rate %u per %" PRIu64 " ns, thresh_ticks %u, burst_ticks %u\n",
			    i, c->name, c->stat_slot + 1, pacer_file_action_name(c->action),
			    pacer_file_key_name(c->key_mode), c->prefix4, c->prefix6, policy_name(c->policy),
			    c->rate_n, (uint64_t)c->interval_ns, c->thresh_ticks, c->burst_ticks);
	}
	if (n >= 0)
		n = fprintf(f, "index,ts_ns,t_rel_s,source,family,prefix,verdict,sampled_by,est_age_ticks,est_age_ns,cpu,thresh_ticks%s\n",
			    h->n_classes ? ",class,key" : "");
	return n < 0 ? write_errno() : 0;
}

/* A record's key beyond its source: "dport 53", "dst 192.0.2.1", or "" (none, or not recorded). */
static const char *record_key_text(const struct pacer_file_header *h, const struct pacer_record *r,
				   char *buf, size_t len)
{
	const struct pacer_class *c = pacer_file_class_of(h, r->class_slot);
	char a[INET6_ADDRSTRLEN];

	buf[0] = 0;
	if (!c || !(r->flags & PACER_REC_KEY))
		return buf;
	if (c->key_mode == PACER_KEY_SRC_DPORT)
		snprintf(buf, len, "dport %u", r->key_dport);
	else if (c->key_mode == PACER_KEY_SRC_DST &&
		 inet_ntop(r->family == 4 ? AF_INET : AF_INET6, r->key_dst, a, sizeof(a)))
		snprintf(buf, len, "dst %s", a);
	return buf;
}

int pacer_csv_write_record(FILE *f, const struct pacer_file_header *h, uint64_t index,
			   const struct pacer_record *r)
{
	static const char *const by[] = { "", "source", "packet", "source+packet" };
	char src[64], age[24], age_ns[24], key[64];
	double rel = ((double)r->ts_ns - (double)h->start_mono_ns) / 1e9;
	int n;

	if (r->est_age_ticks == PACER_AGE_NEVER) {
		snprintf(age, sizeof(age), "never");
		snprintf(age_ns, sizeof(age_ns), "never");
	} else {
		snprintf(age, sizeof(age), "%u", r->est_age_ticks);
		snprintf(age_ns, sizeof(age_ns), "%" PRIu64,
			 (uint64_t)pacer_ticks_ns(r->est_age_ticks, h->tick_shift));
	}
	errno = 0;
	n = fprintf(f, "%" PRIu64 ",%" PRIu64 ",%.9f,%s,%u,%u,%s,%s,%s,%s,%u,%u%s%s%s%s\n", index, (uint64_t)r->ts_ns,
		    rel, pacer_record_source(r, src, sizeof(src)), r->family, r->prefix,
		    r->verdict != PACER_REC_DROP ? "pass" : r->flags & PACER_REC_OBSERVED ? "would_drop" : "drop",
		    by[r->flags & 3], age, age_ns,
		    r->cpu, r->thresh_ticks, h->n_classes ? "," : "",
		    h->n_classes ? pacer_record_class_name(h, r->class_slot) : "", h->n_classes ? "," : "",
		    h->n_classes ? record_key_text(h, r, key, sizeof(key)) : "");
	return n < 0 ? write_errno() : 0;
}
