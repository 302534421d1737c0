// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The record file's records, its reader and its writer (pacer_file.h). */
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

void pacer_file_record_encode(const struct pacer_record *r, uint8_t *buf)
{
	put64(buf + ROFF_TS, r->ts_ns);
	memcpy(buf + ROFF_ADDR, r->addr, 16);
	buf[ROFF_FAMILY] = r->family;
	buf[ROFF_PREFIX] = r->prefix;
	buf[ROFF_VERDICT] = r->verdict;
	buf[ROFF_FLAGS] = r->flags;
	put32(buf + ROFF_AGE, r->est_age_ticks);
	put32(buf + ROFF_CPU, r->cpu);
	put32(buf + ROFF_THRESH, r->thresh_ticks);
}

void pacer_file_record_decode(const uint8_t *buf, struct pacer_record *r)
{
	memset(r, 0, sizeof(*r));
	r->ts_ns = get64(buf + ROFF_TS);
	memcpy(r->addr, buf + ROFF_ADDR, 16);
	r->family = buf[ROFF_FAMILY];
	r->prefix = buf[ROFF_PREFIX];
	r->verdict = buf[ROFF_VERDICT];
	r->flags = buf[ROFF_FLAGS];
	r->est_age_ticks = get32(buf + ROFF_AGE);
	r->cpu = get32(buf + ROFF_CPU);
	r->thresh_ticks = get32(buf + ROFF_THRESH);
}

void pacer_file_record_encode_v(const struct pacer_file_header *h, const struct pacer_record *r,
				uint8_t *buf)
{
	pacer_file_record_encode(r, buf);
	if (h->record_size < PACER_FILE_RECORD_V3_LEN)
		return;
	put32(buf + ROFF_CLASS, r->class_slot);
	put16(buf + ROFF_KEY_DPORT, r->key_dport);
	put16(buf + ROFF_KEY_PAD, 0);
	memcpy(buf + ROFF_KEY_DST, r->key_dst, 16);
}

void pacer_file_record_decode_v(const struct pacer_file_header *h, const uint8_t *buf,
				struct pacer_record *r)
{
	pacer_file_record_decode(buf, r);
	if (h->version_major != PACER_FILE_VERSION_CLASSES)
		return;
	r->class_slot = get32(buf + ROFF_CLASS);
	r->key_dport = get16(buf + ROFF_KEY_DPORT);
	r->pad = get16(buf + ROFF_KEY_PAD);
	memcpy(r->key_dst, buf + ROFF_KEY_DST, 16);
}

/* Any address bit beyond the prefix (or beyond 32 bits for IPv4) set? */
static int bits_beyond_prefix(const uint8_t *addr, unsigned bytes, unsigned prefix)
{
	unsigned i;

	for (i = 0; i < 16; i++) {
		unsigned lo = i * 8;
		uint8_t keep;

		if (i >= bytes || lo >= prefix)
			keep = 0;
		else if (lo + 8 <= prefix)
			keep = 0xff;
		else
			keep = (uint8_t)(0xff << (8 - (prefix - lo)));
		if (addr[i] & ~keep)
			return 1;
	}
	return 0;
}

static int zero16(const uint8_t *b)
{
	static const uint8_t z[16];

	return !memcmp(b, z, 16);
}

#define BAD_RECORD(...) pacer_file_fail(err, PACER_FILE_RECORD_INVALID, -EBADMSG, offset, __VA_ARGS__)

int pacer_file_record_check(const struct pacer_file_header *h, const struct pacer_record *r,
			    uint64_t offset, uint64_t index, struct pacer_file_error *err)
{
	unsigned max_prefix = r->family == 4 ? 32 : 128;
	const struct pacer_class *c;

	if (r->family != 4 && r->family != 6)
		return BAD_RECORD("record %" PRIu64 ": family %u is neither 4 nor 6", index, r->family);
	if (r->prefix > max_prefix)
		return BAD_RECORD("record %" PRIu64 ": prefix /%u is longer than an IPv%u address",
				  index, r->prefix, r->family);
	if (bits_beyond_prefix(r->addr, r->family == 4 ? 4 : 16, r->prefix))
		return BAD_RECORD("record %" PRIu64 ": address has bits set beyond its /%u prefix",
				  index, r->prefix);
	if (r->verdict > PACER_REC_DROP)
		return BAD_RECORD("record %" PRIu64 ": verdict %u is neither pass (0) nor drop (1)",
				  index, r->verdict);
	if (!(r->flags & (PACER_REC_SAMPLED_SOURCE | PACER_REC_SAMPLED_PACKET)) ||
	    (r->flags & ~(PACER_REC_SAMPLED_SOURCE | PACER_REC_SAMPLED_PACKET |
			  (h->n_classes ? PACER_REC_KEY : 0) |
			  (h->version_minor >= PACER_FILE_VERSION_MINOR_OBSERVED ? PACER_REC_OBSERVED : 0))))
		return BAD_RECORD("record %" PRIu64 ": flags 0x%x are not a set of 0x1 and 0x2%s%s", index,
				  r->flags, h->n_classes ? " (and 0x4)" : "",
				  h->version_minor >= PACER_FILE_VERSION_MINOR_OBSERVED ? " (and 0x8)" : "");
	if ((r->flags & PACER_REC_OBSERVED) && r->verdict != PACER_REC_DROP)
		return BAD_RECORD("record %" PRIu64 ": flag 0x8 (observed) on a pass verdict: only a drop is observed",
				  index);
	if (r->pad || (!(r->flags & PACER_REC_KEY) && (r->key_dport || !zero16(r->key_dst))))
		return BAD_RECORD("record %" PRIu64 ": key bytes set without the key flag 0x4, or padding not zero",
				  index);
	if (r->class_slot > (h->n_classes ? PACER_MAX_CLASSES : 0))
		return BAD_RECORD("record %" PRIu64 ": class slot %u is outside 0..%u", index,
				  r->class_slot, h->n_classes ? PACER_MAX_CLASSES : 0);
	if (r->est_age_ticks > (pacer_file_max_thresh(h) > PACER_MAX_THRESH ? 0xffffu : 0xffu) &&
	    r->est_age_ticks != PACER_AGE_NEVER)
		return BAD_RECORD("record %" PRIu64 ": estimated age %u ticks is more than a cell holds",
				  index, r->est_age_ticks);
	if (r->thresh_ticks < PACER_MIN_THRESH || r->thresh_ticks > pacer_file_max_thresh(h))
		return BAD_RECORD("record %" PRIu64 ": threshold %u ticks is outside %d..%u", index,
				  r->thresh_ticks, PACER_MIN_THRESH, pacer_file_max_thresh(h));
	if (r->class_slot && (c = pacer_file_class_of(h, r->class_slot)) &&
	    r->prefix != (r->family == 4 ? c->prefix4 : c->prefix6))
		return BAD_RECORD("record %" PRIu64 ": prefix /%u but its class '%s' keys IPv%u sources by /%u",
				  index, r->prefix, c->name, r->family,
				  r->family == 4 ? c->prefix4 : c->prefix6);
	if (r->cpu >= h->ncpus)
		return BAD_RECORD("record %" PRIu64 ": CPU %u but the header says %u CPUs", index,
				  r->cpu, h->ncpus);
	return 0;
}

uint64_t pacer_file_record_offset(const struct pacer_file_header *h, uint64_t i)
{
	return h->header_len + i * h->record_size;
}

static void warn(struct pacer_file_reader *r, const struct pacer_file_error *e)
{
	if (r->n_warnings < (int)(sizeof(r->warnings) / sizeof(r->warnings[0])))
		r->warnings[r->n_warnings++] = *e;
}

/*
 * Open non-blocking and check the type before reading: opening a FIFO
 * blocks until a writer comes, and reading a device or a FIFO never ends.
 * The fd (blocking again), or negative errno.
 */
static int open_regular(const char *path, struct stat *st, struct pacer_file_error *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), ret;

	if (fd < 0)
		return pacer_file_fail(err, PACER_FILE_IO, -errno, 0, "cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, st))
		ret = pacer_file_fail(err, PACER_FILE_IO, -errno, 0, "cannot stat %s: %s", path, strerror(errno));
	else if (!S_ISREG(st->st_mode))
		ret = pacer_file_fail(err, PACER_FILE_IO, -EINVAL, 0,
			   "%s is not a regular file (a recording is a file written by 'xdp-pacer record')",
			   path);
	else if (fcntl(fd, F_SETFL, 0))
		ret = pacer_file_fail(err, PACER_FILE_IO, -errno, 0, "cannot open %s: %s", path, strerror(errno));
	else
		return fd;
	close(fd);
	return ret;
}

int pacer_file_open(const char *path, struct pacer_file_reader *r, struct pacer_file_error *err)
{
	struct pacer_file_error w;
	struct stat st;
	uint8_t *hbuf = NULL;
	size_t want, got;
	uint64_t data;
	int fd, ret;

	memset(r, 0, sizeof(*r));
	if (err)
		memset(err, 0, sizeof(*err));
	fd = open_regular(path, &st, err);
	if (fd < 0)
		return fd;
	r->f = fdopen(fd, "rb");
	if (!r->f) {
		ret = pacer_file_fail(err, PACER_FILE_IO, -errno, 0, "cannot open %s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	r->file_size = (uint64_t)st.st_size;
	want = r->file_size < PACER_FILE_HEADER_MAX_LEN ? (size_t)r->file_size : PACER_FILE_HEADER_MAX_LEN;
	hbuf = malloc(want ? want : 1);
	if (!hbuf) {
		ret = pacer_file_fail(err, PACER_FILE_IO, -ENOMEM, 0, "out of memory");
		goto out_close;
	}
	got = fread(hbuf, 1, want, r->f);
	if (got != want) {
		ret = pacer_file_fail(err, PACER_FILE_IO, -EIO, got, "read of the header failed");
		goto out_close;
	}
	ret = pacer_file_header_decode(hbuf, got, &r->hdr, err);
	free(hbuf);
	hbuf = NULL;
	if (ret)
		goto out_close;

	data = r->file_size - r->hdr.header_len;
	r->n_records = data / r->hdr.record_size;
	r->tail_bytes = data % r->hdr.record_size;
	if (!(r->hdr.flags & PACER_FILE_F_COMPLETE)) {
		pacer_file_fail(&w, PACER_FILE_INCOMPLETE, 0, OFF_FLAGS,
		     "the recorder did not finish this file (killed, or still writing): it has no end time, record count or loss count");
		warn(r, &w);
	} else if (r->hdr.record_count != r->n_records) {
		pacer_file_fail(&w, PACER_FILE_COUNT_MISMATCH, 0, r->file_size,
		     "the header says %" PRIu64 " records but the file holds %" PRIu64,
		     r->hdr.record_count, r->n_records);
		warn(r, &w);
	}
	if (r->tail_bytes) {
		pacer_file_fail(&w, PACER_FILE_RECORD_TRUNCATED, 0, pacer_file_record_offset(&r->hdr, r->n_records),
		     "record %" PRIu64 " is cut short (%" PRIu64 " of %u bytes); the %" PRIu64 " whole records before it are used",
		     r->n_records, r->tail_bytes, r->hdr.record_size, r->n_records);
		warn(r, &w);
	}
	r->recbuf = malloc(r->hdr.record_size);
	if (!r->recbuf) {
		ret = pacer_file_fail(err, PACER_FILE_IO, -ENOMEM, 0, "out of memory");
		goto out_close;
	}
	if (fseeko(r->f, (off_t)r->hdr.header_len, SEEK_SET)) {
		ret = pacer_file_fail(err, PACER_FILE_IO, -errno, r->hdr.header_len, "seek failed: %s",
			   strerror(errno));
		goto out_close;
	}
	return 0;
out_close:
	free(hbuf);
	pacer_file_close(r);
	return ret;
}

int pacer_file_next(struct pacer_file_reader *r, struct pacer_record *rec,
		    struct pacer_file_error *err)
{
	uint64_t off;

	if (r->next >= r->n_records)
		return 0;
	off = pacer_file_record_offset(&r->hdr, r->next);
	if (fread(r->recbuf, 1, r->hdr.record_size, r->f) != r->hdr.record_size)
		return pacer_file_fail(err, PACER_FILE_IO, -EIO, off,
			    "record %" PRIu64 " could not be read (file shrank while reading?)", r->next);
	pacer_file_record_decode_v(&r->hdr, r->recbuf, rec);
	if (pacer_file_record_check(&r->hdr, rec, off, r->next, err))
		return -EBADMSG;
	r->next++;
	return 1;
}

void pacer_file_close(struct pacer_file_reader *r)
{
	if (r->f)
		fclose(r->f);
	r->f = NULL;
	free(r->recbuf);
	r->recbuf = NULL;
}

/* ---- writing ---- */

int pacer_file_writer_open(struct pacer_file_writer *w, const char *path,
			   enum pacer_file_format format, const struct pacer_file_header *hdr,
			   struct pacer_file_error *err)
{
	uint8_t buf[PACER_FILE_HEADER_BUF_LEN];
	char why[200];
	int ret;

	memset(w, 0, sizeof(*w));
	w->format = format;
	w->hdr = *hdr;
	w->hdr.flags &= ~PACER_FILE_F_COMPLETE;
	w->hdr.record_count = 0;
	w->hdr.end_mono_ns = 0;
	if (pacer_file_header_encode(&w->hdr, buf, sizeof(buf)))
		return pacer_file_fail(err, PACER_FILE_HEADER_INVALID, -EINVAL, 0,
			    "header lengths are not those of format version 1.0, 1.1 or 3.1");
	ret = safe_out_open(&w->out, path, ".tmp", SAFE_FILE_MODE, why, sizeof(why));
	if (ret)
		return pacer_file_fail(err, PACER_FILE_IO, ret, 0, "%s", why);
	w->f = w->out.f;
	w->tmp_path = w->out.tmp_path;
	setvbuf(w->f, NULL, _IOFBF, 1 << 16);
	errno = 0;
	if (format == PACER_FORMAT_CSV)
		ret = pacer_csv_write_header(w->f, &w->hdr);
	else
		ret = fwrite(buf, w->hdr.header_len, 1, w->f) == 1 ? 0 : write_errno();
	if (!ret)
		ret = fflush(w->f) ? -errno : 0;
	if (ret) {
		pacer_file_fail(err, PACER_FILE_IO, ret, 0, "cannot write the header to %s: %s", w->tmp_path,
		     strerror(-ret));
		pacer_file_writer_discard(w);
		return ret;
	}
	return 0;
}

int pacer_file_writer_append(struct pacer_file_writer *w, const struct pacer_record *rec)
{
	uint8_t buf[PACER_FILE_RECORD_V3_LEN];
	int ret;

	if (w->format == PACER_FORMAT_CSV) {
		ret = pacer_csv_write_record(w->f, &w->hdr, w->n_records, rec);
		if (ret)
			return ret;
	} else {
		pacer_file_record_encode_v(&w->hdr, rec, buf);
		errno = 0;
		if (fwrite(buf, w->hdr.record_size, 1, w->f) != 1)
			return write_errno();
	}
	w->n_records++;
	return 0;
}

int pacer_file_writer_flush(struct pacer_file_writer *w)
{
	return fflush(w->f) ? -errno : 0;
}

int pacer_file_writer_finish(struct pacer_file_writer *w, uint64_t end_mono_ns,
			     uint64_t records_lost, struct pacer_file_error *err)
{
	uint8_t buf[PACER_FILE_HEADER_BUF_LEN];
	char why[200];
	int ret = 0;

	w->hdr.flags |= PACER_FILE_F_COMPLETE;
	w->hdr.end_mono_ns = end_mono_ns;
	w->hdr.record_count = w->n_records;
	w->hdr.records_lost = records_lost;
	errno = 0;
	if (w->format == PACER_FORMAT_CSV) {
		if (fprintf(w->f, "# complete: records %" PRIu64 ", records_lost %" PRIu64 ", end_mono_ns %" PRIu64 "\n",
			    w->n_records, records_lost, end_mono_ns) < 0)
			ret = write_errno();
	}
	if (!ret && fflush(w->f))
		ret = -errno;
	if (!ret && w->format == PACER_FORMAT_BINARY) {
		/* Rewrite the header in place: the data before it is already on its way. */
		pacer_file_header_encode(&w->hdr, buf, sizeof(buf));
		errno = 0;
		if (pwrite(fileno(w->f), buf, w->hdr.header_len, 0) != (ssize_t)w->hdr.header_len)
			ret = write_errno();
	}
	if (ret) {
		pacer_file_fail(err, PACER_FILE_IO, ret, 0, "cannot finish %s: %s (the records so far stay in %s)",
		     w->out.path, strerror(-ret), w->tmp_path);
		pacer_file_writer_abandon(w);
		return ret;
	}
	ret = safe_out_commit(&w->out, why, sizeof(why));
	if (ret)
		pacer_file_fail(err, PACER_FILE_IO, ret, 0, "%s", why);
	w->f = NULL;
	w->tmp_path = NULL;
	return ret;
}

void pacer_file_writer_abandon(struct pacer_file_writer *w)
{
	safe_out_abandon(&w->out);
	w->f = NULL;
	w->tmp_path = NULL;
}

void pacer_file_writer_discard(struct pacer_file_writer *w)
{
	safe_out_discard(&w->out);
	w->f = NULL;
	w->tmp_path = NULL;
}
