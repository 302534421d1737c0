// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fuzz targets' driver where clang has no libFuzzer runtime: a
 * deterministic mutation loop (byte edits, the dictionary's tokens put in,
 * cuts, splices of two seeds) over the seed files, under ASan and UBSan.
 * It takes the libFuzzer options tests/fuzz.sh passes (-runs=N, -seed=S,
 * -max_len=N, -max_total_time=S, -dict=FILE; the others are ignored),
 * seed files or directories as arguments, and prints the same final stats
 * lines (stat::number_of_executed_units, stat::average_exec_per_sec).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct blob {
	uint8_t *b;
	size_t n;
};

static struct blob *seeds, *dict;
static size_t nseeds, ndict;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? rng % n : 0;
}

static void add(struct blob **v, size_t *n, const void *b, size_t len)
{
	struct blob *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv || !(nv[*n].b = malloc(len + 1)))
		exit(1);
	memcpy(nv[*n].b, b, len);
	nv[*n].n = len;
	*v = nv;
	(*n)++;
}

static void add_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t buf[1 << 16];
	size_t n;

	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	add(&seeds, &nseeds, buf, n);
}

static void add_path(const char *path)
{
	struct stat st;
	struct dirent **ents;
	char p[4096];
	int n, i;

	if (stat(path, &st))
		return;
	if (!S_ISDIR(st.st_mode)) {
		add_file(path);
		return;
	}
	n = scandir(path, &ents, NULL, alphasort);
	for (i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.') {
			snprintf(p, sizeof(p), "%s/%s", path, ents[i]->d_name);
			add_file(p);
		}
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
}

/* libFuzzer's dictionary lines: name="token" with \xNN and \\ \" escapes. */
static void load_dict(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512], tok[256];
	size_t n;
	char *p;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		p = strchr(line, '"');
		if (line[0] == '#' || !p)
			continue;
		for (p++, n = 0; *p && *p != '"' && n < sizeof(tok); p++) {
			if (*p == '\\' && p[1] == 'x' && p[2] && p[3]) {
				char hex[3] = { p[2], p[3], 0 };

				tok[n++] = (char)strtoul(hex, NULL, 16);
				p += 3;
			} else if (*p == '\\' && p[1]) {
				tok[n++] = *++p;
			} else {
				tok[n++] = *p;
			}
		}
		if (n)
			add(&dict, &ndict, tok, n);
	}
	fclose(f);
}

/* One mutation of m (n bytes, room for max) in place; returns the new length. */
static size_t mutate(uint8_t *m, size_t n, size_t max)
{
	size_t at = rnd(n + 1), k;
	const struct blob *d;

	switch (rnd(6)) {
	case 0: /* a byte changed */
		if (n)
			m[rnd(n)] = (uint8_t)rnd(256);
		break;
	case 1: /* a token put in */
		if (!ndict)
			break;
		d = &dict[rnd(ndict)];
		if (n + d->n > max)
			break;
		memmove(m + at + d->n, m + at, n - at);
		memcpy(m + at, d->b, d->n);
		n += d->n;
		break;
	case 2: /* a run cut out */
		k = rnd(16) + 1;
		if (at + k <= n) {
			memmove(m + at, m + at + k, n - at - k);
			n -= k;
		}
		break;
	case 3: /* a run repeated */
		k = rnd(32) + 1;
		if (at + k <= n && n + k <= max) {
			memmove(m + at + k, m + at, n - at);
			n += k;
		}
		break;
	case 4: /* a digit changed to another number's */
		if (n && m[at % n] >= '0' && m[at % n] <= '9')
			m[at % n] = (uint8_t)('0' + rnd(10));
		else if (n)
			m[at % n] = "0123456789/.-:,[]=# \n\r"[rnd(23)];
		break;
	default: /* the tail of another seed */
		d = &seeds[rnd(nseeds)];
		k = rnd(d->n + 1);
		if (at + d->n - k <= max) {
			memcpy(m + at, d->b + k, d->n - k);
			n = at + d->n - k;
		}
		break;
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned long long runs = 100000, done = 0, seed = 1;
	double max_time = 0, secs;
	size_t max_len = 4096, n, i;
	struct timespec t0, t1;
	uint8_t *m;
	int a, k;

	for (a = 1; a < argc; a++) {
		if (!strncmp(argv[a], "-runs=", 6))
			runs = strtoull(argv[a] + 6, NULL, 10);
		else if (!strncmp(argv[a], "-seed=", 6))
			seed = strtoull(argv[a] + 6, NULL, 10);
		else if (!strncmp(argv[a], "-max_len=", 9))
			max_len = strtoull(argv[a] + 9, NULL, 10);
		else if (!strncmp(argv[a], "-max_total_time=", 16))
			max_time = strtod(argv[a] + 16, NULL);
		else if (!strncmp(argv[a], "-dict=", 6))
			load_dict(argv[a] + 6);
		else if (argv[a][0] != '-')
			add_path(argv[a]);
	}
	if (!nseeds)
		add(&seeds, &nseeds, "", 0);
	rng ^= seed * 0x2545f4914f6cdd1dULL;
	m = malloc(max_len + 1);
	if (!m || !max_len)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < nseeds; i++, done++) /* every seed as it is */
		LLVMFuzzerTestOneInput(seeds[i].b, seeds[i].n < max_len ? seeds[i].n : max_len);
	for (; done < runs; done++) {
		const struct blob *s = &seeds[rnd(nseeds)];

		n = s->n < max_len ? s->n : max_len;
		memcpy(m, s->b, n);
		for (k = (int)rnd(8) + 1; k; k--)
			n = mutate(m, n, max_len);
		LLVMFuzzerTestOneInput(m, n);
		if (max_time > 0 && !(done & 255)) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if ((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9 > max_time)
				break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("Done %llu runs in %.0f second(s)\n", done, secs);
	printf("stat::number_of_executed_units: %llu\n", done);
	printf("stat::average_exec_per_sec:     %.0f\n", secs > 0 ? done / secs : 0.0);
	fflush(stdout);
	free(m);
	for (i = 0; i < nseeds; i++)
		free(seeds[i].b);
	for (i = 0; i < ndict; i++)
		free(dict[i].b);
	free(seeds);
	free(dict);
	return 0;
}
