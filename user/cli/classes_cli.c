// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Traffic classes on load's and set's command lines (classes_cli.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "classes_cli.h"
#include "classes_map.h"
#include "prefix_sets.h"
#include "cli_log.h"
#include "cli_values.h"
#include "pacer_conf.h"
#include "pacer_names.h"
#include "ticks.h"
#include "prom.h"

int classes_merge(struct pacer_conf *conf, struct class_conf *cli, struct class_conf **out)
{
	struct class_conf *cc = conf && conf->cls ? conf->cls : cli;
	char err[640];

	if (class_conf_merge(cc, cc == cli ? &(struct class_conf){ 0 } : cli, err, sizeof(err))) {
		pr_err("%s", err);
		return 2;
	}
	*out = cc;
	return 0;
}

bool classes_pace(const struct class_conf *cc)
{
	int i;

	for (i = 0; i < cc->n; i++)
		if (cc->cls[i].c.action == PACER_ACTION_PACE)
			return true;
	return false;
}

int classes_choose_tick(const struct class_conf *cc, uint32_t n, uint64_t interval_ns,
			uint64_t tick_ns, uint32_t backend, uint32_t *tick_shift)
{
	struct limit_req l[PACER_MAX_CLASSES + 1];
	char who[PACER_MAX_CLASSES][200], err[1024];
	int i, k = 0;

	for (i = 0; i < cc->n; i++) {
		const struct class_spec *s = &cc->cls[i];

		if (s->c.action != PACER_ACTION_PACE)
			continue;
		class_where(cc, s, who[k], sizeof(who[k]));
		l[k] = (struct limit_req){ s->c.rate_n, s->c.interval_ns, who[k] };
		k++;
	}
	l[k++] = (struct limit_req){ n, interval_ns, "the global limit ('interval' or 'rate')" };
	if (!limits_choose_tick(l, k, tick_ns, backend, tick_shift, err, sizeof(err)))
		return 0;
	pr_err("%s", err);
	return 2;
}

int classes_build(struct class_conf *cc, uint32_t tick_shift, uint32_t backend, uint32_t prefix4,
		  uint32_t prefix6, const char *hint, struct pacer_class out[PACER_MAX_CLASSES])
{
	struct pacer_rate rate;
	char why[512], where[200];
	int i;

	class_conf_default_prefixes(cc, prefix4, prefix6);
	for (i = 0; i < cc->n; i++) {
		struct class_spec *s = &cc->cls[i];

		out[i] = s->c;
		/* Provisional, for the check: classes_install gives the real ones. */
		out[i].stat_slot = (uint32_t)i;
		out[i].id = (uint32_t)i + 1;
		if (s->c.action != PACER_ACTION_PACE)
			continue;
		if (limit_fit(s->c.rate_n, s->c.interval_ns, tick_shift, backend, &rate, why, sizeof(why))) {
			pr_err("%s: %s%s", class_where(cc, s, where, sizeof(where)), why, hint ? hint : "");
			return 2;
		}
		out[i].thresh_ticks = rate.thresh;
		out[i].burst_ticks = rate.burst;
	}
	if (pacer_classes_check(out, cc->n, backend, why, sizeof(why))) {
		pr_err("%s", why);
		return 2;
	}
	return 0;
}

static uint32_t random_id(void *arg)
{
	uint32_t id = 0;

	(void)arg;
	if (getrandom(&id, sizeof(id), 0) != sizeof(id))
		id = (uint32_t)random();
	return id;
}

/* The list's prefixes as classes_map.h takes them (NULL for none; *n its length). */
static struct pacer_prefix *to_map_prefixes(const struct prefix_list *l, int *n)
{
	struct pacer_prefix *p = calloc(l->n ? l->n : 1, sizeof(*p));
	size_t i;

	*n = (int)l->n;
	if (!p)
		return NULL;
	for (i = 0; i < l->n; i++) {
		p[i].family = l->p[i].family;
		p[i].len = l->p[i].len;
		memcpy(p[i].addr, l->p[i].addr, sizeof(p[i].addr));
	}
	return p;
}

/* The configuration's entries the lists hold now, as classes_map.h gives them back, split by verdict. */
static int read_lists(const struct pacer_class_maps *m, struct pacer_prefix **ex, int *ne,
		      struct pacer_prefix **de, int *nd)
{
	int max = 2 * PACER_LIST_MAX_ENTRIES, n = 0, i, ret;
	struct pacer_prefix *all = calloc((size_t)max, sizeof(*all));
	uint32_t *v = calloc((size_t)max, sizeof(*v));

	*ex = calloc((size_t)max, sizeof(**ex));
	*de = calloc((size_t)max, sizeof(**de));
	*ne = *nd = 0;
	ret = all && v && *ex && *de ? pacer_lists_read(m, 1u << PACER_LIST_CONF, all, v, max, &n) : -ENOMEM;
	for (i = 0; !ret && i < n; i++) {
		if (v[i] == PACER_LIST_EXEMPT)
			(*ex)[(*ne)++] = all[i];
		else
			(*de)[(*nd)++] = all[i];
	}
	free(all);
	free(v);
	return ret;
}

/*
 * The list l gives in place of the running *p (*n long): *changed gets bit
 * when they differ.  0 or -ENOMEM.
 */
static int replace_list(const struct prefix_list *l, struct pacer_prefix **p, int *n, unsigned *changed,
			unsigned bit)
{
	int nn;
	struct pacer_prefix *np = to_map_prefixes(l, &nn);

	if (!np)
		return -ENOMEM;
	if (!pacer_prefix_sets_same(*p, (size_t)*n, np, (size_t)nn))
		*changed |= bit;
	free(*p);
	*p = np;
	*n = nn;
	return 0;
}

int classes_install(const struct pacer_class_maps *m, const struct class_conf *cc,
		    struct pacer_class want[PACER_MAX_CLASSES])
{
	unsigned changed;

	return classes_install_changes(m, cc, want, &changed);
}

int classes_install_changes(const struct pacer_class_maps *m, const struct class_conf *cc,
			    struct pacer_class want[PACER_MAX_CLASSES], unsigned *changed)
{
	struct pacer_class cur[PACER_MAX_CLASSES];
	struct pacer_prefix *ex = NULL, *de = NULL;
	bool reset[PACER_MAX_CLASSES];
	int ncur = 0, ne = 0, nd = 0, ret = 0, i;
	char err[512];

	*changed = 0;
	if (cc->exempt.given || cc->deny.given) {
		/* A kind not given keeps what runs. */
		ret = read_lists(m, &ex, &ne, &de, &nd);
		if (ret) {
			pr_err("cannot read the exempt/deny lists: %s", strerror(-ret));
			goto out;
		}
		if (cc->exempt.given)
			ret = replace_list(&cc->exempt, &ex, &ne, changed, CLASSES_CHANGED_EXEMPT);
		if (!ret && cc->deny.given)
			ret = replace_list(&cc->deny, &de, &nd, changed, CLASSES_CHANGED_DENY);
		if (ret) {
			pr_err("out of memory for the exempt/deny lists");
			goto out;
		}
	}
	if (cc->classes_given) {
		ret = pacer_classes_read(m, cur, &ncur);
		if (ret) {
			pr_err("cannot read the running classes: %s", strerror(-ret));
			goto out;
		}
		class_assign_ids(want, cc->n, cur, ncur, random_id, NULL, reset);
		if (!class_lists_same(want, cc->n, cur, ncur))
			*changed |= CLASSES_CHANGED_CLASSES;
		for (i = 0; i < PACER_MAX_CLASSES; i++) {
			if (!reset[i])
				continue;
			ret = pacer_class_counters_reset(m, (uint32_t)i);
			if (ret) {
				pr_err("cannot reset the counters of class slot %d: %s", i, strerror(-ret));
				goto out;
			}
		}
	}
	/* The lists first: a source the new classes would pace may be newly exempt. */
	if (cc->exempt.given || cc->deny.given) {
		ret = pacer_lists_apply(m, ex, ne, de, nd, err, sizeof(err));
		if (ret) {
			pr_err("cannot apply the exempt/deny lists: %s", err);
			goto out;
		}
	}
	if (cc->classes_given) {
		ret = pacer_classes_install(m, want, cc->n, err, sizeof(err));
		if (ret)
			pr_err("cannot install the classes: %s", err);
	}
out:
	free(ex);
	free(de);
	return ret ? 1 : 0;
}

/* What a rate needs besides its spacing fitting the range. */
static const char *backend_rate_note(uint32_t backend)
{
	if (backend == PACER_BACKEND_TABLE)
		return ", rates N/T whose burst the table's 16384 ticks hold";
	return backend == PACER_BACKEND_DENSE ? ", rates 1/T alike (the dense table delivers N = 1 only)"
					      : ", rates 1/T alike (the sketch delivers N = 1 only)";
}

void classes_report(const struct pacer_class_maps *m, uint32_t tick_shift, uint32_t backend)
{
	struct pacer_class cur[PACER_MAX_CLASSES];
	char mb[160], ab[160], rb[64];
	uint64_t lo, hi;
	int n = 0, i;

	if (!pacer_classes_read(m, cur, &n) && n) {
		pr_info("  classes (the first that matches decides; unmatched traffic passes):");
		for (i = 0; i < n; i++)
			pr_info("    %-15s %s -> %s", cur[i].name, class_match_format(&cur[i].m, mb, sizeof(mb)),
				class_action_format(&cur[i], ab, sizeof(ab)));
		limit_range(tick_shift, backend, &lo, &hi);
		pr_info("  limits this tick holds ('set' may give classes these): intervals within %s%s",
			format_duration_range(lo, hi, rb, sizeof(rb)),
			backend_rate_note(backend));
	}
	lists_report(m, "  ");
}

/* "2 prefixes", with "(1 configured, 1 added, 1 with a timeout)" once any were added. */
static const char *list_size(const struct pacer_list_counts *c, int l, char *buf, size_t len)
{
	unsigned long long conf = c->n[l][PACER_LIST_CONF], added = c->n[l][PACER_LIST_ADDED];
	int at = snprintf(buf, len, "%llu prefix%s", conf + added, conf + added == 1 ? "" : "es");

	if (added && at > 0 && (size_t)at < len)
		snprintf(buf + at, len - (size_t)at, " (%llu configured, %llu added, %llu with a timeout)",
			 conf, added, (unsigned long long)c->timed[l]);
	return buf;
}

void lists_report(const struct pacer_class_maps *m, const char *indent)
{
	struct pacer_list_entry *v = NULL;
	struct pacer_list_counts c;
	char eb[96], db[96];
	size_t n = 0;

	if (pacer_lists_dump(m, &v, &n))
		return;
	pacer_lists_count(v, n, pacer_list_clock_ns(), &c);
	free(v);
	if (c.n[0][0] + c.n[0][1] + c.n[1][0] + c.n[1][1])
		pr_info("%sexempt: %s, deny: %s", indent, list_size(&c, 0, eb, sizeof(eb)),
			list_size(&c, 1, db, sizeof(db)));
}

int classes_fill(const struct pacer_class_maps *m, struct prom_class *out, int *n)
{
	struct pacer_class cur[PACER_MAX_CLASSES];
	int i, ret = pacer_classes_read(m, cur, n);

	for (i = 0; !ret && i < *n; i++) {
		out[i].c = cur[i];
		ret = pacer_class_counters_read(m, cur[i].stat_slot, out[i].counters);
	}
	return ret;
}
