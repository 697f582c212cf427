// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kcache - the kernel's symbols, from the symbol cache or kallsyms.  See
 * kcache.h.
 *
 * An entry: a header (this build's ID, the key's and the symbols' sizes,
 * a CRC of the whole entry), the key (text: one line for vmlinux, one a
 * module), then ksyms__pack()'s block.  It sits in the symbol cache's
 * directory, named by a hash of its key, with a suffix of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/cachedir.h"
#include "lib/util.h"
#include "symbolize/kcache.h"
#include "symbolize/ksyms.h"

#define KC_MAGIC	"CPROFKC1"
/* How much of kallsyms is read for _text, at most. */
#define KC_HEAD_MAX	(1 << 20)
/* A build ID's most bytes (a note's, as hex in the key). */
#define KC_ID_MAX	64

struct kc_head {
	char magic[8];
	uint8_t exe_id[CACHEDIR_ID_MAX];	/* the cprof-dump that made it */
	uint32_t exe_id_len, key_len;
	uint64_t blob_len;
	uint32_t crc, pad;			/* crc: of all, this field 0 */
};
_Static_assert(sizeof(struct kc_head) == 64, "kc_head has no padding");

static bool kc_on;
static char *kc_dir;			/* NULL: the default */
static struct kcache_src kc_src = {
	"/proc/kallsyms", "/proc/modules", "/sys",
};

void kcache_setup(const char *dir)
{
	free(kc_dir);
	kc_dir = dir ? strdup(dir) : NULL;
	kc_on = !dir || (*dir && kc_dir);
}

void kcache_set_src(const struct kcache_src *src)
{
	static const struct kcache_src real = {
		"/proc/kallsyms", "/proc/modules", "/sys",
	};

	kc_src = src ? *src : real;
}

/* The first bytes of path, at most max, into buf: how many, or -1. */
static ssize_t read_head(const char *path, char *buf, size_t max)
{
	size_t n = 0;
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (n < max) {
		r = read(fd, buf + n, max - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += r;
	}
	close(fd);
	return r < 0 ? -1 : (ssize_t)n;
}

/* The GNU build ID among the ELF notes in path, as hex into out; false if none. */
static bool notes_build_id(const char *path, char out[2 * KC_ID_MAX + 1])
{
	unsigned char buf[4096];
	ssize_t n = read_head(path, (char *)buf, sizeof(buf));
	size_t off = 0;

	while (n > 0 && off + 12 <= (size_t)n) {
		uint32_t namesz, descsz, type, i;
		size_t name, desc;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		name = off + 12;
		desc = name + ((namesz + 3ULL) & ~3ULL);
		if (desc > (size_t)n || descsz > (size_t)n - desc)
			return false;
		if (namesz == 4 && !memcmp(buf + name, "GNU", 4) && type == 3 &&
		    descsz && descsz <= KC_ID_MAX) {
			for (i = 0; i < descsz; i++)
				sprintf(out + 2 * i, "%02x", buf[desc + i]);
			return true;
		}
		off = desc + ((descsz + 3ULL) & ~3ULL);
	}
	return false;
}

/* _text's address from the head of kallsyms; 0 if not there (or hidden). */
static uint64_t text_addr(const char *kallsyms)
{
	char *buf = malloc(KC_HEAD_MAX + 1), *line, *nl, *name;
	uint64_t addr = 0;
	ssize_t n;
	int fd;

	if (!buf)
		return 0;
	fd = open(kallsyms, O_RDONLY | O_CLOEXEC);
	n = 0;
	/* the kernel formats kallsyms as it is read: only as far as needed */
	while (fd >= 0 && !addr && n < KC_HEAD_MAX) {
		ssize_t r = read(fd, buf + n, KC_HEAD_MAX - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		buf[n + r] = '\0';
		line = buf;
		/* lines read whole so far, from the last one not looked at */
		while (!addr && (nl = strchr(line, '\n'))) {
			*nl = '\0';
			name = strrchr(line, ' ');
			if (name && !strcmp(name + 1, "_text"))
				addr = strtoull(line, NULL, 16);
			line = nl + 1;
		}
		/* keep the partial line at the front */
		n = buf + n + r - line;
		memmove(buf, line, n);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return addr;
}

/* Add printf's output to the key *s of length *len. */
static int key_add(char **s, size_t *len, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int key_add(char **s, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || grow_array(s, cap, *len + n + 1, 1))
		return -1;
	va_start(ap, fmt);
	vsnprintf(*s + *len, n + 1, fmt, ap);
	va_end(ap);
	*len += n;
	return 0;
}

/*
 * The running kernel's key (malloc'd text), or NULL: no build ID, _text
 * hidden, a module coming or going, or out of memory.
 */
static char *kernel_key(const struct kcache_src *src, size_t *len)
{
	char id[2 * KC_ID_MAX + 1], path[4096], name[256], state[64], *line = NULL;
	unsigned long long size, addr;
	size_t cap = 0, lcap = 0;
	char *key = NULL;
	uint64_t text;
	bool ok = true;
	FILE *f;

	*len = 0;
	snprintf(path, sizeof(path), "%s/kernel/notes", src->sys);
	if (!notes_build_id(path, id))
		return NULL;
	text = text_addr(src->kallsyms);
	if (!text || key_add(&key, len, &cap, "vmlinux %s %" PRIx64 "\n", id,
			    text))
		goto bad;
	f = fopen(src->modules, "re");
	if (!f) {
		/* no module support: vmlinux alone */
		if (errno == ENOENT)
			return key;
		goto bad;
	}
	while (ok && getline(&line, &lcap, f) > 0) {
		if (sscanf(line, "%255s %llu %*s %*s %63s %llx", name, &size,
			   state, &addr) != 4 || strcmp(state, "Live")) {
			ok = false;
			break;
		}
		snprintf(path, sizeof(path), "%s/module/%s/notes/.note.gnu.build-id",
			 src->sys, name);
		if (!notes_build_id(path, id))
			strcpy(id, "-");
		ok = !key_add(&key, len, &cap, "%s %llu %llx %s\n", name, size,
			     addr, id);
	}
	ok = ok && !ferror(f);
	free(line);
	fclose(f);
	if (ok)
		return key;
bad:
	free(key);
	*len = 0;
	return NULL;
}

/* The symbol cache's directory, for kernel entries; NULL if none. */
static struct cachedir *open_dir(void)
{
	static const struct cachedir_kind kind = {
		.what = "kernel symbols",
		.items = "kernel symbols",
		.without = "kallsyms is read every time",
		.suffix = ".ksym",
		.max_bytes = KCACHE_MAX_BYTES,
	};
	char def[4096], fb[4096];
	const char *dir;
	/* the symbol cache (symcache.c) says what its directory does */
	bool said = true;

	if (kc_dir)
		return cachedir__open(kc_dir, &kind, false);
	dir = cachedir_default("symbols", def, sizeof(def));
	if (!dir)
		return NULL;
	return cachedir__open_default(dir, cachedir_fallback("symbols", fb,
							     sizeof(fb)),
				      &kind, &said);
}

/* An entry's name: a hash of its key, where cachedir names files. */
static void entry_name(struct cachedir *c, const char *key, size_t len,
		       char *name, size_t size)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	struct stat st = { 0 };
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)key[i]) * 0x100000001b3ULL;
	st.st_ino = h;
	st.st_size = len;
	cachedir__name(c, &st, name, size);
}

static uint32_t entry_crc(const struct kc_head *h, const char *key,
			  const void *blob)
{
	struct kc_head z = *h;
	uLong crc;

	z.crc = 0;
	crc = crc32(0L, (const Bytef *)&z, sizeof(z));
	crc = crc32(crc, (const Bytef *)key, h->key_len);
	return crc32(crc, blob, h->blob_len);
}

/* Read len bytes at off of fd into a new block; NULL if not all there. */
static char *read_at(int fd, size_t len, off_t off)
{
	char *buf = malloc(len ? len : 1);
	size_t n;
	ssize_t r;

	for (n = 0; buf && n < len; n += r) {
		r = pread(fd, buf + n, len - n, off + n);
		if (r <= 0) {
			free(buf);
			return NULL;
		}
	}
	return buf;
}

/* The entry of key, NULL if none or bad (why in warn). */
static struct ksyms *get(struct cachedir *c, const char *key, size_t key_len,
			 char *warn, size_t warn_len)
{
	char name[128], *head = NULL, *blob = NULL, *more;
	const struct kc_head *h;
	struct ksyms *ks = NULL;
	const uint8_t *id;
	struct stat st;
	uint32_t id_len;
	size_t len;
	int fd;

	id = cachedir__exe_id(c, &id_len);
	if (!id_len)
		return NULL;
	entry_name(c, key, key_len, name, sizeof(name));
	fd = cachedir__open_entry(c, name, sizeof(*h), KCACHE_ENTRY_MAX, &st);
	if (fd < 0)
		return NULL;
	len = st.st_size;
	/* the header and the key, then the symbols in a block of their own */
	head = read_at(fd, sizeof(*h), 0);
	h = (const struct kc_head *)head;
	if (!h || memcmp(h->magic, KC_MAGIC, sizeof(h->magic))) {
		snprintf(warn, warn_len, "kernel symbols: cache entry %s %s: not used (kallsyms is read instead)",
			 esc(name), h ? "is not one" : "could not be read");
		goto out;
	}
	/* another build's (an upgrade made them all stale) */
	if (h->exe_id_len != id_len || memcmp(h->exe_id, id, id_len)) {
		cachedir__drop(c, name, len);
		goto out;
	}
	/* another kernel's, of the same hash */
	if (h->key_len != key_len || key_len > len - sizeof(*h) ||
	    h->blob_len != len - sizeof(*h) - key_len)
		goto out;
	more = realloc(head, sizeof(*h) + key_len);
	if (!more)
		goto out;
	head = more;
	h = (const struct kc_head *)head;
	blob = read_at(fd, h->blob_len, sizeof(*h) + key_len);
	if (!blob || pread(fd, head + sizeof(*h), key_len,
				    sizeof(*h)) != (ssize_t)key_len ||
	    memcmp(head + sizeof(*h), key, key_len))
		goto out;
	if (entry_crc(h, key, blob) != h->crc ||
	    !(ks = ksyms__unpack(blob, h->blob_len))) {
		snprintf(warn, warn_len, "kernel symbols: cache entry %s does not check: not used (kallsyms is read instead)",
			 esc(name));
		goto out;
	}
	/* ks holds the block now */
	blob = NULL;
	/* used now: the last to go */
	cachedir__touch(fd);
out:
	close(fd);
	free(head);
	free(blob);
	return ks;
}

static void put(struct cachedir *c, const char *key, size_t key_len,
		const struct ksyms *ks)
{
	struct kc_head h = { .magic = KC_MAGIC };
	struct iovec iov[3];
	const uint8_t *id;
	char name[128];
	uint32_t id_len;
	size_t len;
	void *blob;

	id = cachedir__exe_id(c, &id_len);
	if (!id_len)
		return;
	blob = ksyms__pack(ks, &len);
	if (!blob)
		return;
	if (sizeof(h) + key_len + len > KCACHE_ENTRY_MAX)
		goto out;
	memcpy(h.exe_id, id, id_len);
	h.exe_id_len = id_len;
	h.key_len = key_len;
	h.blob_len = len;
	h.crc = entry_crc(&h, key, blob);
	iov[0] = (struct iovec){ &h, sizeof(h) };
	iov[1] = (struct iovec){ (void *)key, key_len };
	iov[2] = (struct iovec){ blob, len };
	entry_name(c, key, key_len, name, sizeof(name));
	/* a full disk: no entry, kallsyms is read again next time */
	cachedir__write(c, name, iov, 3);
out:
	free(blob);
}

struct kcache_loader {
	pthread_t thread;
	int threaded;
	const char *kallsyms_path;	/* NULL: the running kernel's */
	const char *modules_path;
	struct ksyms *ks;
	char err[KSYMS_ERR_MAX];
	char warn[320];
};

/* The running kernel's symbols, through the cache. */
static void load_running(struct kcache_loader *l)
{
	const struct kcache_src src = kc_src;
	struct cachedir *c = NULL;
	char *key, *again;
	size_t len, len2;

	key = kc_on ? kernel_key(&src, &len) : NULL;
	if (key)
		c = open_dir();
	if (c)
		l->ks = get(c, key, len, l->warn, sizeof(l->warn));
	if (!l->ks) {
		l->ks = ksyms__load_quiet(src.kallsyms, src.modules, l->err,
					  sizeof(l->err));
		/* kept only if no module came or went meanwhile */
		again = l->ks && c ? kernel_key(&src, &len2) : NULL;
		if (again && len2 == len && !memcmp(again, key, len))
			put(c, key, len, l->ks);
		free(again);
	}
	cachedir__close(c);
	free(key);
}

static void *loader_main(void *arg)
{
	struct kcache_loader *l = arg;

	if (!l->kallsyms_path && !l->modules_path)
		load_running(l);
	else
		l->ks = ksyms__load_quiet(l->kallsyms_path ? l->kallsyms_path :
					  kc_src.kallsyms,
					  l->modules_path ? l->modules_path :
					  kc_src.modules,
					  l->err, sizeof(l->err));
	return NULL;
}

struct ksyms *kcache__load_kallsyms(const char *kallsyms_path,
				    const char *modules_path)
{
	return ksyms__load(kallsyms_path ? kallsyms_path : kc_src.kallsyms,
			   modules_path ? modules_path : kc_src.modules);
}

struct kcache_loader *kcache__load_start(const char *kallsyms_path,
					 const char *modules_path)
{
	struct kcache_loader *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->kallsyms_path = kallsyms_path;
	l->modules_path = modules_path;
	l->threaded = !pthread_create(&l->thread, NULL, loader_main, l);
	return l;
}

static struct ksyms *finish(struct kcache_loader *l, bool report)
{
	struct ksyms *ks;

	if (!l)
		return NULL;
	if (l->threaded)
		pthread_join(l->thread, NULL);
	else
		loader_main(l);
	if (l->warn[0] && report)
		warning("%s", l->warn);
	if (l->err[0] && report)
		fprintf(stderr, "%s\n", l->err);
	ks = l->ks;
	free(l);
	return ks;
}

struct ksyms *kcache__load_finish(struct kcache_loader *l)
{
	return finish(l, true);
}

void kcache__load_cancel(struct kcache_loader *l)
{
	ksyms__free(finish(l, false));
}
