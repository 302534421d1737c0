// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading libxdp's dispatcher on an interface: its programs in run order. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <xdp/libxdp.h>
#include "xdp_chain.h"

static const char *const action_names[XDP_CHAIN_ACTIONS] = {
	[XDP_ABORTED] = "XDP_ABORTED", [XDP_DROP] = "XDP_DROP", [XDP_PASS] = "XDP_PASS",
	[XDP_TX] = "XDP_TX", [XDP_REDIRECT] = "XDP_REDIRECT",
};

const char *xdp_chain_action_name(unsigned int action)
{
	return action < XDP_CHAIN_ACTIONS ? action_names[action] : NULL;
}

static void prog_of(struct xdp_program *p, struct xdp_chain_prog *out)
{
	unsigned int a;

	snprintf(out->name, sizeof(out->name), "%s", xdp_program__name(p));
	out->id = xdp_program__id(p);
	out->priority = xdp_program__run_prio(p);
	out->chain_actions = 0;
	for (a = 0; a < XDP_CHAIN_ACTIONS; a++)
		if (xdp_program__chain_call_enabled(p, (enum xdp_action)a))
			out->chain_actions |= 1u << a;
}

int xdp_chain_read(int ifindex, struct xdp_chain *c)
{
	struct xdp_multiprog *mp;
	struct xdp_program *p = NULL;
	long err;

	memset(c, 0, sizeof(*c));
	mp = xdp_multiprog__get_from_ifindex(ifindex);
	err = libxdp_get_error(mp);
	if (err == -ENOENT || (!err && !mp))
		return 0; /* nothing attached */
	if (err)
		return (int)err;
	c->mode = xdp_multiprog__attach_mode(mp);
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		if (p) {
			prog_of(p, &c->progs[0]);
			c->nprogs = 1;
		}
	} else {
		c->dispatcher = true;
		p = xdp_multiprog__main_prog(mp);
		c->dispatcher_id = p ? xdp_program__id(p) : 0;
		p = NULL;
		while ((p = xdp_multiprog__next_prog(p, mp)) && c->nprogs < XDP_CHAIN_MAX)
			prog_of(p, &c->progs[c->nprogs++]);
	}
	xdp_multiprog__close(mp);
	return 0;
}

int xdp_chain_find(const struct xdp_chain *c, const char *name)
{
	int i;

	for (i = 0; i < c->nprogs; i++)
		if (!strcmp(c->progs[i].name, name))
			return i;
	return -1;
}

const char *xdp_chain_actions_str(uint32_t mask, char *buf, size_t len)
{
	size_t used = 0;
	unsigned int a;

	buf[0] = 0;
	for (a = 0; a < XDP_CHAIN_ACTIONS; a++)
		if (mask & (1u << a))
			used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
						 used ? "," : "", action_names[a]);
	if (!used)
		snprintf(buf, len, "none");
	return buf;
}

const char *xdp_chain_mode_name(int mode)
{
	switch (mode) {
	case XDP_MODE_NATIVE:
		return "native";
	case XDP_MODE_SKB:
		return "skb";
	case XDP_MODE_HW:
		return "hw";
	default:
		return "unknown";
	}
}
