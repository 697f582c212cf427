// SPDX-License-Identifier: GPL-2.0
/*
 * streamtext < stream: print a cprof stream one record per line, for the VM
 * tests to check with awk what the module wrote, independently of
 * cprof-dump.  Not a user tool: it trusts sizes only as far as not reading
 * past what it has, and exits 1 on anything malformed.
 *
 *   H version freq period_ns nr_cpu_ids online_cpus mode pid flags duration_ns
 *   S time pid tid cpu flags nr_kernel nr_user comm ip...   (hex ips, kernel first)
 *   M time pid start end pgoff build_id_size path
 *   L time cpu samples other
 *   T time cpu period_ns
 *   E time duration_ns reason samples lost
 *   ? type size
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kmod/cprof_format.h"

static unsigned char buf[1 << 16];

static int read_full(void *p, size_t n)
{
	return fread(p, 1, n, stdin) == n ? 0 : -1;
}

int main(void)
{
	struct cprof_header h;
	struct cprof_rec rec;
	int ended = 0;

	if (read_full(&h, sizeof(h)) || memcmp(h.magic, CPROF_MAGIC, 8) ||
	    h.size < sizeof(h) || h.size - sizeof(h) > sizeof(buf) ||
	    read_full(buf, h.size - sizeof(h))) {
		fprintf(stderr, "streamtext: bad header\n");
		return 1;
	}
	printf("H %u %u %" PRIu64 " %u %u %u %u %u %" PRIu64 "\n", h.version,
	       h.freq, (uint64_t)h.period_ns, h.nr_cpu_ids, h.online_cpus,
	       h.mode, h.pid, h.flags, (uint64_t)h.duration_ns);
	while (read_full(&rec, sizeof(rec)) == 0) {
		if (rec.size < sizeof(rec) || rec.size % 8 ||
		    rec.size > sizeof(buf)) {
			fprintf(stderr, "streamtext: bad record size %u\n", rec.size);
			return 1;
		}
		memcpy(buf, &rec, sizeof(rec));
		if (read_full(buf + sizeof(rec), rec.size - sizeof(rec))) {
			fprintf(stderr, "streamtext: truncated record\n");
			return 1;
		}
		switch (rec.type) {
		case CPROF_REC_SAMPLE: {
			struct cprof_sample *s = (void *)buf;
			unsigned int i, n = s->nr_kernel + s->nr_user;

			if (sizeof(*s) + n * 8 > rec.size)
				return 1;
			s->comm[CPROF_COMM_LEN - 1] = 0;
			for (i = 0; s->comm[i]; i++)
				if (s->comm[i] == ' ')
					s->comm[i] = '_';
			printf("S %" PRIu64 " %u %u %u %u %u %u %.16s",
			       (uint64_t)s->time_ns, s->pid, s->tid, s->cpu,
			       rec.flags, s->nr_kernel, s->nr_user,
			       s->comm[0] ? s->comm : "-");
			for (i = 0; i < n; i++)
				printf(" %" PRIx64, (uint64_t)s->ips[i]);
			printf("\n");
			break;
		}
		case CPROF_REC_MMAP: {
			struct cprof_mmap *m = (void *)buf;

			buf[rec.size - 1] = 0;
			printf("M %" PRIu64 " %u %" PRIx64 " %" PRIx64 " %" PRIx64
			       " %u %s\n", (uint64_t)m->time_ns, m->pid,
			       (uint64_t)m->start, (uint64_t)m->end,
			       (uint64_t)m->pgoff, m->build_id_size, m->path);
			break;
		}
		case CPROF_REC_LOST: {
			struct cprof_lost *l = (void *)buf;

			printf("L %" PRIu64 " %u %" PRIu64 " %" PRIu64 "\n",
			       (uint64_t)l->time_ns, l->cpu,
			       (uint64_t)l->samples, (uint64_t)l->other);
			break;
		}
		case CPROF_REC_THROTTLE: {
			struct cprof_throttle *t = (void *)buf;

			printf("T %" PRIu64 " %u %" PRIu64 "\n",
			       (uint64_t)t->time_ns, t->cpu,
			       (uint64_t)t->period_ns);
			break;
		}
		case CPROF_REC_END: {
			struct cprof_end *e = (void *)buf;

			printf("E %" PRIu64 " %" PRIu64 " %u %" PRIu64 " %" PRIu64
			       "\n", (uint64_t)e->time_ns,
			       (uint64_t)e->duration_ns, e->reason,
			       (uint64_t)e->samples, (uint64_t)e->lost);
			ended = 1;
			break;
		}
		default:
			printf("? %u %u\n", rec.type, rec.size);
		}
	}
	if (!ended) {
		fprintf(stderr, "streamtext: no end record\n");
		return 1;
	}
	return 0;
}
