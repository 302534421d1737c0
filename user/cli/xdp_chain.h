/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The programs libxdp's dispatcher runs on an interface, in the order it
 * runs them: where the limiter sits among its neighbours, and whether an
 * interface can take it beside what is attached there.
 */
#ifndef XDP_CHAIN_H
#define XDP_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/bpf.h>

/* libxdp's dispatcher runs at most this many programs (MAX_DISPATCHER_ACTIONS). */
#define XDP_CHAIN_MAX 10

struct xdp_chain_prog {
	char name[BPF_OBJ_NAME_LEN];
	uint32_t id;
	uint32_t priority;
	uint32_t chain_actions; /* bit (1 << XDP_x): that verdict goes on to the next program */
};

struct xdp_chain {
	int nprogs;             /* 0: nothing attached */
	bool dispatcher;        /* libxdp's dispatcher; else one program attached on its own */
	uint32_t dispatcher_id; /* the dispatcher's program id (dispatcher only) */
	int mode;               /* enum xdp_attach_mode of what is attached */
	/* In run order (dispatcher), or the one program attached on its own. */
	struct xdp_chain_prog progs[XDP_CHAIN_MAX];
};

/* What is attached to ifindex.  0, or negative errno (the state cannot be read). */
int xdp_chain_read(int ifindex, struct xdp_chain *c);

/* The index in c of the program named name, or -1. */
int xdp_chain_find(const struct xdp_chain *c, const char *name);

/* "XDP_PASS", "XDP_PASS,XDP_DROP" or "none": the actions in mask, into buf. */
const char *xdp_chain_actions_str(uint32_t mask, char *buf, size_t len);

/* "XDP_PASS" for XDP_PASS (action < XDP_CHAIN_ACTIONS), else NULL. */
#define XDP_CHAIN_ACTIONS 5
const char *xdp_chain_action_name(unsigned int action);

/* "native", "skb", "hw" or "unknown". */
const char *xdp_chain_mode_name(int mode);

#endif
