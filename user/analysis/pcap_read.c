// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <byteswap.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pcap/pcap.h>
#include "pcap_read.h"
#include "safe_file.h"

#define PCAPNG_SHB 0x0A0D0D0Au /* the same bytes in either byte order */
#define PCAPNG_BOM 0x1A2B3C4Du
#define PCAPNG_IDB 1
#define PCAPNG_OPB 2 /* the obsolete Packet Block */
#define PCAPNG_SPB 3
#define PCAPNG_EPB 6
#define PCAPNG_BLOCK_MAX (16u << 20) /* Wireshark's limit: past it, the length is corrupt */
#define PCAPNG_IF_MAX 65536u         /* EPB's interface ids are 32-bit; no capture has more */
#define PCAPNG_OPT_TSRESOL 9
#define PCAPNG_OPT_TSOFFSET 14

static void linktype_name(int lt, char *buf, size_t len)
{
	const char *n = pcap_datalink_val_to_name(lt);

	snprintf(buf, len, "%s (%d)", n ? n : "unknown", lt);
}

/* Classic pcap through libpcap (which also knows its variants: swapped, nanosecond, modified). */
static int read_classic(FILE *fp, struct pcap_read_info *info, pcap_frame_fn frame, void *ctx,
			char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	struct pcap_pkthdr *ph;
	const u_char *data;
	uint64_t n = 0;
	pcap_t *pc;
	int ret = 0, got;

	pc = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, ebuf);
	if (!pc) {
		fclose(fp);
		snprintf(err, errlen, "not a capture libpcap can read: %s", ebuf);
		return -EINVAL;
	}
	linktype_name(pcap_datalink(pc), info->linktype, sizeof(info->linktype));
	info->ethernet = pcap_datalink(pc) == DLT_EN10MB;
	info->snaplen = (uint32_t)pcap_snapshot(pc);
	while (frame && info->ethernet && (got = pcap_next_ex(pc, &ph, &data)) != PCAP_ERROR_BREAK) {
		if (got == PCAP_ERROR) {
			/* libpcap reads a record whole: short of the end, the record itself is bad. */
			if (feof(fp)) {
				info->truncated = 1;
				snprintf(info->truncation, sizeof(info->truncation), "%s", pcap_geterr(pc));
			} else {
				info->corrupt = 1;
				snprintf(info->corruption, sizeof(info->corruption),
					 "record %" PRIu64 ": %s", n + 1, pcap_geterr(pc));
			}
			break;
		}
		n++;
		ret = frame(ctx, (uint64_t)ph->ts.tv_sec * 1000000000ULL + (uint64_t)ph->ts.tv_usec, data,
			    ph->caplen, ph->len);
		if (ret)
			break;
	}
	pcap_close(pc); /* closes fp */
	return ret;
}

struct ng_if {
	uint16_t linktype;
	uint8_t tsresol;  /* if_tsresol: 10^-v s, or 2^-(v & 0x7f) s with the top bit */
	int64_t tsoffset; /* if_tsoffset: seconds added to every timestamp */
};

struct ng_reader {
	FILE *f;
	struct pcap_read_info *info;
	int swap, in_section;
	uint64_t off;      /* file offset of the block being read */
	uint64_t next;     /* ... and of the one after it */
	uint8_t *buf;      /* the block after its type and length */
	size_t cap;
	struct ng_if *ifs;
	uint32_t n_ifs, cap_ifs;
	uint64_t last_ts;  /* a Simple Packet Block has none: it takes the last one seen */
};

static uint16_t g16(const struct ng_reader *r, const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return r->swap ? bswap_16(v) : v;
}

static uint32_t g32(const struct ng_reader *r, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return r->swap ? bswap_32(v) : v;
}

static uint64_t g64(const struct ng_reader *r, const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return r->swap ? bswap_64(v) : v;
}

__attribute__((format(printf, 2, 3)))
static int corrupt(struct ng_reader *r, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	r->info->corrupt = 1;
	n = (size_t)snprintf(r->info->corruption, sizeof(r->info->corruption),
			     "block at offset %" PRIu64 ": ", r->off);
	va_start(ap, fmt);
	if (n < sizeof(r->info->corruption))
		vsnprintf(r->info->corruption + n, sizeof(r->info->corruption) - n, fmt, ap);
	va_end(ap);
	return -1;
}

static int truncated(struct ng_reader *r, size_t want, size_t got)
{
	r->info->truncated = 1;
	snprintf(r->info->truncation, sizeof(r->info->truncation),
		 "the file ends inside the block at offset %" PRIu64 ": %zu of its %zu bytes", r->off,
		 got, want);
	return -1;
}

/*
 * The next block: its type, and its body (between the length and the
 * trailing length) in r->buf.  1, 0 at the end of the file, -1 when the
 * file ends inside it (info->truncated) or it is corrupt (info->corrupt).
 */
static int next_block(struct ng_reader *r, uint32_t *type, uint32_t *body_len)
{
	uint8_t h[12];
	uint32_t len, trail;
	size_t got, head = 8;

	r->off = r->next;
	got = fread(h, 1, 8, r->f);
	if (!got)
		return 0;
	if (got < 8)
		return truncated(r, 8, got);
	memcpy(type, h, 4);
	if (*type == PCAPNG_SHB) {
		uint32_t bom;

		got = fread(h + 8, 1, 4, r->f);
		if (got < 4)
			return truncated(r, 12, 8 + got);
		head = 12;
		memcpy(&bom, h + 8, 4);
		if (bom == PCAPNG_BOM)
			r->swap = 0;
		else if (bswap_32(bom) == PCAPNG_BOM)
			r->swap = 1;
		else
			return corrupt(r, "section header with byte-order magic 0x%08x", bom);
		r->in_section = 1;
	} else if (!r->in_section) {
		return corrupt(r, "no section header before it");
	}
	*type = g32(r, h);
	len = g32(r, h + 4);
	if (len < 12 + (head - 8) || len % 4 || len > PCAPNG_BLOCK_MAX)
		return corrupt(r, "a block length of %" PRIu32 " bytes (a multiple of 4 from 12 to %u)",
			       len, PCAPNG_BLOCK_MAX);
	if (len > r->cap) {
		uint8_t *nb = realloc(r->buf, len);

		if (!nb)
			return -ENOMEM;
		r->buf = nb;
		r->cap = len;
	}
	memcpy(r->buf, h + 8, head - 8);
	got = fread(r->buf + (head - 8), 1, len - head, r->f);
	if (got < len - head)
		return truncated(r, len, head + got);
	trail = g32(r, r->buf + len - 12);
	if (trail != len)
		return corrupt(r, "its length is %" PRIu32 " at the start and %" PRIu32 " at the end",
			       len, trail);
	*body_len = len - 12;
	r->next += len;
	return 1;
}

/* A frame skipped because its interface's link type cannot be keyed; the type named once. */
static void skip_linktype(struct pcap_read_info *info, uint16_t lt)
{
	char name[40];
	size_t used = strlen(info->skipped_linktypes);

	info->skipped_linktype++;
	linktype_name(lt, name, sizeof(name));
	if (!strstr(info->skipped_linktypes, name))
		snprintf(info->skipped_linktypes + used, sizeof(info->skipped_linktypes) - used, "%s%s",
			 used ? ", " : "", name);
}

/* A packet block whose lengths do not add up: skipped (the block's own length is sound). */
__attribute__((format(printf, 2, 3)))
static void skip_corrupt(struct ng_reader *r, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (r->info->skipped_corrupt++)
		return;
	n = (size_t)snprintf(r->info->first_skip, sizeof(r->info->first_skip),
			     "the first at offset %" PRIu64 ": ", r->off);
	va_start(ap, fmt);
	if (n < sizeof(r->info->first_skip))
		vsnprintf(r->info->first_skip + n, sizeof(r->info->first_skip) - n, fmt, ap);
	va_end(ap);
}

static int add_interface(struct ng_reader *r, const uint8_t *b, uint32_t len)
{
	struct ng_if *i;
	uint32_t o = 8;

	if (len < 8)
		return corrupt(r, "interface description of %" PRIu32 " bytes (at least 8)", len);
	if (r->n_ifs == PCAPNG_IF_MAX)
		return corrupt(r, "more than %u interfaces", PCAPNG_IF_MAX);
	if (r->n_ifs == r->cap_ifs) {
		uint32_t cap = r->cap_ifs ? 2 * r->cap_ifs : 8;
		struct ng_if *n = realloc(r->ifs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->ifs = n;
		r->cap_ifs = cap;
	}
	i = &r->ifs[r->n_ifs++];
	*i = (struct ng_if){ .linktype = g16(r, b), .tsresol = 6 };
	/* Options: code, length, value padded to 4 bytes; an overrun ends them. */
	while (o + 4 <= len) {
		uint16_t code = g16(r, b + o), olen = g16(r, b + o + 2);

		if (!code || o + 4 + olen > len)
			break;
		if (code == PCAPNG_OPT_TSRESOL && olen == 1)
			i->tsresol = b[o + 4];
		else if (code == PCAPNG_OPT_TSOFFSET && olen == 8)
			i->tsoffset = (int64_t)g64(r, b + o + 4);
		o += 4 + ((olen + 3u) & ~3u);
	}
	/* The capture is described by its first Ethernet interface, or its first. */
	if (i->linktype == DLT_EN10MB && !r->info->ethernet) {
		r->info->ethernet = 1;
		linktype_name(i->linktype, r->info->linktype, sizeof(r->info->linktype));
		r->info->snaplen = g32(r, b + 4);
	} else if (!r->info->linktype[0]) {
		linktype_name(i->linktype, r->info->linktype, sizeof(r->info->linktype));
		r->info->snaplen = g32(r, b + 4);
	}
	return 0;
}

/* An interface's timestamp units as nanoseconds (unsigned: a corrupt value wraps, never traps). */
static uint64_t ts_ns(const struct ng_if *i, uint32_t hi, uint32_t lo)
{
	uint64_t u = (uint64_t)hi << 32 | lo, ns;
	unsigned v = i->tsresol & 0x7f, k;

	if (i->tsresol & 0x80) {
		ns = (uint64_t)(((unsigned __int128)u * 1000000000u) >> v);
	} else if (v <= 9) {
		ns = u;
		for (k = v; k < 9; k++)
			ns *= 10;
	} else {
		ns = u;
		for (k = 9; k < v && ns; k++)
			ns /= 10;
	}
	return ns + (uint64_t)i->tsoffset * 1000000000u;
}

/* One packet: keyed when its interface is Ethernet, else counted as skipped.  frame()'s return. */
static int packet(struct ng_reader *r, uint32_t if_id, uint32_t hi, uint32_t lo, int has_ts,
		  const uint8_t *data, uint32_t caplen, uint32_t len, pcap_frame_fn frame, void *ctx)
{
	const struct ng_if *i;

	if (if_id >= r->n_ifs) {
		r->info->skipped_no_interface++;
		return 0;
	}
	i = &r->ifs[if_id];
	if (i->linktype != DLT_EN10MB) {
		skip_linktype(r->info, i->linktype);
		return 0;
	}
	if (has_ts)
		r->last_ts = ts_ns(i, hi, lo);
	return frame(ctx, r->last_ts, data, caplen, len);
}

static int read_pcapng(FILE *f, struct pcap_read_info *info, pcap_frame_fn frame, void *ctx,
		       char *err, size_t errlen)
{
	struct ng_reader r = { .f = f, .info = info };
	uint32_t type = 0, len = 0, caplen;
	const uint8_t *b;
	int ret, blocks = 0;

	info->pcapng = 1;
	while ((ret = next_block(&r, &type, &len)) > 0) {
		b = r.buf;
		blocks++;
		ret = 0;
		if (type == PCAPNG_SHB) {
			if (len < 16 || g16(&r, b + 4) != 1) {
				ret = corrupt(&r, "section header of pcapng version %u (1 is read)",
					      len < 16 ? 0 : g16(&r, b + 4));
				break;
			}
			r.n_ifs = 0; /* a new section describes its own interfaces */
		} else if (type == PCAPNG_IDB) {
			ret = add_interface(&r, b, len);
		} else if (type == PCAPNG_EPB || type == PCAPNG_OPB) {
			uint32_t id = type == PCAPNG_EPB ? g32(&r, b) : g16(&r, b);

			caplen = len < 20 ? 0 : g32(&r, b + 12);
			if (len < 20)
				skip_corrupt(&r, "a packet block of %" PRIu32 " bytes (at least 32)", len + 12);
			else if (caplen > len - 20)
				skip_corrupt(&r, "captured length %" PRIu32 ", more than the block's %" PRIu32 " bytes",
					     caplen, len - 20);
			else if (frame)
				ret = packet(&r, id, g32(&r, b + 4), g32(&r, b + 8), 1, b + 20, caplen,
					     g32(&r, b + 16), frame, ctx);
		} else if (type == PCAPNG_SPB) {
			/* Its captured length is the block's room, at most the packet's own length. */
			caplen = len < 4 ? 0 : g32(&r, b) < len - 4 ? g32(&r, b) : len - 4;
			if (len < 4)
				skip_corrupt(&r, "a simple packet block of %" PRIu32 " bytes (at least 16)",
					     len + 12);
			else if (frame)
				ret = packet(&r, 0, 0, 0, 0, b + 4, caplen, g32(&r, b), frame, ctx);
		}
		if (ret)
			break;
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	else if (ret == -1 && blocks == 0 && info->corrupt)
		ret = -EINVAL, snprintf(err, errlen, "not a pcapng file: %s", info->corruption);
	else if (ret == -1 && ferror(f))
		ret = -EIO, snprintf(err, errlen, "read error: %s", strerror(errno));
	else if (ret == -1)
		ret = 0; /* cut short or corrupt part way: info says which */
	free(r.buf);
	free(r.ifs);
	fclose(f);
	return ret;
}

int pcap_read_frames(const char *path, struct pcap_read_info *info, pcap_frame_fn frame, void *ctx,
		     char *err, size_t errlen)
{
	char why[128];
	uint32_t magic = 0;
	int fd = open_regular_file(path, why, sizeof(why));
	FILE *f;

	*info = (struct pcap_read_info){ 0 };
	if (fd < 0) {
		snprintf(err, errlen, fd == -EINVAL ? "%s: a capture is a file" : "cannot read: %s", why);
		return fd;
	}
	f = fdopen(fd, "rb");
	if (!f) {
		snprintf(err, errlen, "cannot read: %s", strerror(errno));
		close(fd);
		return -errno;
	}
	if (fread(&magic, 1, 4, f) == 4 && magic == PCAPNG_SHB) {
		rewind(f);
		return read_pcapng(f, info, frame, ctx, err, errlen);
	}
	rewind(f);
	return read_classic(f, info, frame, ctx, err, errlen);
}
