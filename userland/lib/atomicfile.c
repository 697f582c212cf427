// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * atomicfile - an output that appears whole or not at all.  See
 * atomicfile.h.
 *
 * cprof-dump runs as root and may write where users write too (/tmp, a
 * shared directory): every name there is looked up relative to a
 * descriptor of a directory that was checked, without following a
 * symlink, so what a user puts at the name (a FIFO, a symlink to a device
 * or to root's files, one flipped into the other) is replaced, never
 * opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/atomicfile.h"
#include "lib/util.h"

#define TMP_TRIES	64
#define LINKS_MAX	8	/* symlinks of ours followed at the name */
#define LOOKUPS_MAX	40	/* and on the way to it, as the kernel's */
/* a path as walked: "." or "/", then the path */
#define WALK_MAX	(PATH_MAX + 8)

struct atomicfile {
	FILE *f;
	char *path;		/* for messages; NULL: stdout */
	int dirfd;		/* -1: written directly (f) */
	char *name;		/* in dirfd */
	char *tmp_name;		/* in dirfd */
	char *tmp;		/* its path, for a signal handler */
	bool replace;		/* atomicfile__open_new() */
};

enum at_mode { AT_OUTPUT, AT_NEW };

/* Root's or this user's: nobody else may change its mode. */
static bool ours(const struct stat *st)
{
	return st->st_uid == geteuid() || st->st_uid == 0;
}

/* A directory whose entries nobody else may add, remove or replace. */
static bool private_dir(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && ours(st) && !(st->st_mode & 0022);
}

/*
 * A directory where nobody else may replace what this user made: private,
 * or writable by others but sticky (/tmp).
 */
static bool safe_dir(const struct stat *st)
{
	return private_dir(st) ||
	       (S_ISDIR(st->st_mode) && ours(st) && (st->st_mode & S_ISVTX));
}

/*
 * An O_PATH descriptor of dir, each directory on the way checked with
 * safe_dir() before a name is looked up in it.  A symlink on the way is
 * followed only if root's or this user's, its target walked the same way
 * (up to LOOKUPS_MAX of them).  -1 and errno: EPERM if a directory or
 * symlink failed the check (its path as walked in bad).
 */
static int open_dir(const char *dir, char *bad, size_t bad_size)
{
	char rest[WALK_MAX], walked[WALK_MAX], target[PATH_MAX];
	char comp[NAME_MAX + 1];
	const char *p = rest, *end;
	int fd = -1, next, links = 0;
	size_t wlen = 0, n;
	bool start = true;
	struct stat st;

	if (snprintf(rest, sizeof(rest), "%s", dir) >= (int)sizeof(rest))
		goto too_long;
	for (;;) {
		if (start) {
			/* the start, or a link's absolute target */
			start = false;
			if (fd >= 0)
				close(fd);
			wlen = snprintf(walked, sizeof(walked), "%s",
					*p == '/' ? "/" : ".");
			fd = open(walked, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0)
				return -1;
		}
		if (fstat(fd, &st))
			goto err;
		if (!safe_dir(&st))
			goto unsafe;
		while (*p == '/')
			p++;
		if (!*p)
			return fd;
		end = strchrnul(p, '/');
		n = end - p;
		if (n > NAME_MAX)
			goto too_long;
		memcpy(comp, p, n);
		comp[n] = '\0';
		p = end;
		if (!strcmp(comp, "."))
			continue;
		if (wlen + n + 2 > sizeof(walked))
			goto too_long;
		wlen += sprintf(walked + wlen, "%s%s",
				walked[wlen - 1] == '/' ? "" : "/", comp);
		if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW))
			goto err;
		if (S_ISLNK(st.st_mode)) {
			ssize_t len;

			/* in a checked directory nobody else may swap it */
			if (!ours(&st))
				goto unsafe;
			len = readlinkat(fd, comp, target, sizeof(target));
			if (len < 0)
				goto err;
			if (++links > LOOKUPS_MAX) {
				errno = ELOOP;
				goto err;
			}
			/* the target, then what followed the link */
			if ((size_t)len >= sizeof(target) ||
			    len + strlen(p) + 1 > sizeof(rest))
				goto too_long;
			memmove(rest + len, p, strlen(p) + 1);
			memcpy(rest, target, len);
			p = rest;
			start = *p == '/';
			wlen -= n + (wlen > n + 1);	/* back to the link's dir */
			walked[wlen] = '\0';
			continue;
		}
		next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW |
			      O_CLOEXEC);
		close(fd);
		fd = next;
		if (fd < 0)
			return -1;
	}
unsafe:
	snprintf(bad, bad_size, "%s", walked);
	errno = EPERM;
	goto err;
too_long:
	errno = ENAMETOOLONG;
err:
	if (fd >= 0)
		close(fd);
	return -1;
}

static int dir_fail(const char *path, const char *dir, int err,
		    const char *bad)
{
	if (err == EPERM && *bad)
		return fail("failed to create %s: %s is a directory others may write (it must be a directory only this user may write, or a sticky one)",
			    esc(path), esc(bad));
	return fail("failed to create %s: %s: %s", esc(path), esc(dir), strerror(err));
}

int atomicfile__check_dir(const char *dir)
{
	char bad[WALK_MAX] = "";
	int fd = open_dir(dir, bad, sizeof(bad));

	if (fd < 0) {
		if (errno == EPERM && *bad)
			return fail("cannot write into %s: %s is a directory others may write (it must be a directory only this user may write, or a sticky one)",
				    esc(dir), esc(bad));
		return fail("cannot write into %s: %s", esc(dir), strerror(errno));
	}
	close(fd);
	return 0;
}

/* /dev/fd/N (and the like): N, a descriptor the caller opened; else -1. */
static int caller_fd(const char *path)
{
	long n;

	if (!strcmp(path, "-") || !strcmp(path, "/dev/stdout"))
		return STDOUT_FILENO;
	if (!strcmp(path, "/dev/stderr"))
		return STDERR_FILENO;
	if (!strncmp(path, "/dev/fd/", 8) &&
	    !parse_long_quiet(path + 8, 0, INT_MAX, &n))
		return n;
	if (!strncmp(path, "/proc/self/fd/", 14) &&
	    !parse_long_quiet(path + 14, 0, INT_MAX, &n))
		return n;
	return -1;
}

/* The caller's descriptor fd, written through a stream of its own. */
static int open_caller_fd(struct atomicfile *o, int fd)
{
	int flags = fcntl(fd, F_GETFL), dup_fd;

	if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
		return fail("failed to open %s: %s", esc(o->path),
			    flags < 0 ? strerror(errno) :
			    "the descriptor is not open for writing");
	if (fd == STDOUT_FILENO) {
		o->f = stdout;
		return 0;
	}
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	o->f = dup_fd >= 0 ? fdopen(dup_fd, "w") : NULL;
	if (!o->f) {
		if (dup_fd >= 0)
			close(dup_fd);
		return fail("failed to open %s: %s", esc(o->path), strerror(errno));
	}
	return 0;
}

/*
 * A FIFO or device that is the name itself (no symlink) in a directory
 * nobody else may write: the user's own, written in place (a rename
 * would replace /dev/null).  0, or -1 after printing why.
 */
static int open_in_place(struct atomicfile *o, const struct stat *dir_st,
			 const struct stat *st)
{
	struct stat now;
	int fd;

	if (!private_dir(dir_st))
		return fail("failed to open %s: a FIFO or device in a directory others may write is not written to (use -o - or /dev/fd/N for a pipe)",
			    esc(o->path));
	fd = openat(o->dirfd, o->name, O_WRONLY | O_NOFOLLOW | O_NOCTTY |
		    O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &now) || now.st_dev != st->st_dev ||
			now.st_ino != st->st_ino)) {
		close(fd);
		fd = -1;
		errno = ESTALE;
	}
	o->f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!o->f) {
		if (fd >= 0)
			close(fd);
		return fail("failed to open %s: %s", esc(o->path), strerror(errno));
	}
	close(o->dirfd);
	o->dirfd = -1;
	return 0;
}

/*
 * n bytes for a temporary name, as soon as the machine has any: the name
 * needs no secret (O_EXCL refuses one planted), and a window written in the
 * first seconds after boot must not wait for the entropy pool, nor fail
 * when --every's timer interrupts that wait (EINTR).  0, or -1 (errno).
 */
static int name_bytes(void *buf, size_t n)
{
	unsigned int flags = GRND_INSECURE;
	ssize_t r;

	for (;;) {
		r = getrandom(buf, n, flags);
		if (r == (ssize_t)n)
			return 0;
		if (r >= 0 || errno == EINTR)
			continue;
		/* before Linux 5.6 */
		if (errno != EINVAL || !flags)
			return -1;
		flags = 0;
	}
}

/* A new file (0600) beside the name, O_EXCL; 0, or -1 after printing. */
static int create_tmp(struct atomicfile *o, const char *dir)
{
	static const char chars[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[8];
	int fd = -1, i, j;

	for (i = 0; i < TMP_TRIES && fd < 0; i++) {
		if (name_bytes(rnd, sizeof(rnd)))
			return fail("failed to create %s: %s", esc(o->path),
				    strerror(errno));
		free(o->tmp_name);
		/* a name of NAME_MAX bytes still has room for the suffix */
		if (asprintf(&o->tmp_name, ".%.200s.XXXXXXXX", o->name) < 0) {
			o->tmp_name = NULL;
			return fail("failed to open the output: %s",
				    strerror(ENOMEM));
		}
		for (j = 0; j < 8; j++)
			o->tmp_name[strlen(o->tmp_name) - 8 + j] =
				chars[rnd[j] % (sizeof(chars) - 1)];
		do
			fd = openat(o->dirfd, o->tmp_name,
				    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				    O_CLOEXEC, 0600);
		while (fd < 0 && errno == EINTR);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		free(o->tmp_name);
		o->tmp_name = NULL;
		return fail("failed to create %s: %s", esc(o->path), strerror(errno));
	}
	/* 0600 whatever the umask */
	if (fchmod(fd, 0600) || !(o->f = fdopen(fd, "w")) ||
	    asprintf(&o->tmp, "%s%s%s", dir,
		     dir[strlen(dir) - 1] == '/' ? "" : "/", o->tmp_name) < 0) {
		o->tmp = NULL;
		fail("failed to create %s: %s", esc(o->path), strerror(errno));
		if (!o->f)
			close(fd);
		return -1;
	}
	return 0;
}

static struct atomicfile *open_as(const char *path, enum at_mode mode,
				   int links);

/*
 * A symlink of root's or this user's at the name, in a checked directory:
 * nobody else put it there, so its target is opened (with the same
 * checks), as the user meant (/dev/stdin, a "latest" link).
 */
static struct atomicfile *follow(struct atomicfile *o, const char *dir,
				 int links)
{
	struct atomicfile *to = NULL;
	char target[PATH_MAX], *path;
	ssize_t n;

	n = readlinkat(o->dirfd, o->name, target, sizeof(target) - 1);
	if (n < 0 || links >= LINKS_MAX) {
		fail("failed to create %s: %s", esc(o->path),
		     strerror(n < 0 ? errno : ELOOP));
		return NULL;
	}
	target[n] = '\0';
	if (asprintf(&path, "%s%s%s", *target == '/' ? "" : dir,
		     *target == '/' ? "" : "/", target) < 0) {
		fail("failed to open the output: %s", strerror(ENOMEM));
		return NULL;
	}
	to = open_as(path, AT_OUTPUT, links + 1);
	free(path);
	return to;
}

static struct atomicfile *open_as(const char *path, enum at_mode mode,
				   int links)
{
	struct atomicfile *to;
	struct atomicfile *o = calloc(1, sizeof(*o));
	char bad[WALK_MAX] = "", *dir = NULL, *slash;
	struct stat dir_st, st;
	int fd;

	if (!o)
		goto oom;
	o->dirfd = -1;
	o->replace = mode == AT_NEW;
	if (!path)
		path = "-";
	fd = mode == AT_OUTPUT ? caller_fd(path) : -1;
	if (fd >= 0) {
		if (fd != STDOUT_FILENO || strcmp(path, "-")) {
			o->path = strdup(path);
			if (!o->path)
				goto oom;
		}
		if (open_caller_fd(o, fd))
			goto err;
		return o;
	}
	o->path = strdup(path);
	dir = strdup(path);
	if (!o->path || !dir)
		goto oom;
	slash = strrchr(dir, '/');
	o->name = strdup(slash ? slash + 1 : dir);
	if (!o->name)
		goto oom;
	if (slash)
		slash[slash == dir] = '\0';	/* "/x": "/" */
	else
		strcpy(dir, ".");
	if (!*o->name || !strcmp(o->name, ".") || !strcmp(o->name, "..")) {
		fail("failed to create %s: %s", esc(path), strerror(EISDIR));
		goto err;
	}
	o->dirfd = open_dir(dir, bad, sizeof(bad));
	if (o->dirfd < 0) {
		dir_fail(path, dir, errno, bad);
		goto err;
	}
	if (fstat(o->dirfd, &dir_st)) {
		fail("failed to create %s: %s", esc(path), strerror(errno));
		goto err;
	}
	if (!fstatat(o->dirfd, o->name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (S_ISDIR(st.st_mode) && mode == AT_OUTPUT) {
			fail("failed to create %s: %s", esc(path), strerror(EISDIR));
			goto err;
		}
		if (mode == AT_OUTPUT &&
		    (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) ||
		     S_ISBLK(st.st_mode))) {
			if (open_in_place(o, &dir_st, &st))
				goto err;
			free(dir);
			return o;
		}
		if (mode == AT_OUTPUT && S_ISLNK(st.st_mode) && ours(&st)) {
			to = follow(o, dir, links);
			free(dir);
			atomicfile__abort(o);
			return to;
		}
		/* a socket (/dev/log): not replaced by a profile */
		if (mode == AT_OUTPUT && !S_ISREG(st.st_mode) &&
		    !S_ISLNK(st.st_mode)) {
			fail("failed to create %s: not a regular file", esc(path));
			goto err;
		}
	}
	if (create_tmp(o, dir))
		goto err;
	free(dir);
	return o;
oom:
	fail("failed to open the output: %s", strerror(ENOMEM));
err:
	free(dir);
	atomicfile__abort(o);
	return NULL;
}

struct atomicfile *atomicfile__open(const char *path)
{
	return open_as(path, AT_OUTPUT, 0);
}

struct atomicfile *atomicfile__open_new(const char *path)
{
	return open_as(path, AT_NEW, 0);
}

FILE *atomicfile__stream(const struct atomicfile *o)
{
	return o->f;
}

const char *atomicfile__name(const struct atomicfile *o)
{
	return o->path ? o->path : "stdout";
}

const char *atomicfile__tmp_path(const struct atomicfile *o)
{
	return o->tmp;
}

static void atomicfile__free(struct atomicfile *o)
{
	if (o->dirfd >= 0)
		close(o->dirfd);
	free(o->path);
	free(o->name);
	free(o->tmp_name);
	free(o->tmp);
	free(o);
}

/*
 * A directory at a name of atomicfile__open_new()'s (one made there at
 * a predictable name, to lose the file): swapped with the file, then
 * removed if it can be.  0 ok.
 */
static int exchange(struct atomicfile *o)
{
	if (renameat2(o->dirfd, o->tmp_name, o->dirfd, o->name,
		      RENAME_EXCHANGE))
		return -1;
	/* what was at the name is at tmp_name now: never opened */
	if (unlinkat(o->dirfd, o->tmp_name, AT_REMOVEDIR) &&
	    unlinkat(o->dirfd, o->tmp_name, 0))
		warning("%s: a directory was at its name: moved to %s",
			esc(o->path), esc(o->tmp));
	free(o->tmp_name);
	o->tmp_name = NULL;
	return 0;
}

int atomicfile__commit(struct atomicfile *o)
{
	FILE *f = o->f;
	int err = 0;

	o->f = NULL;
	if (f == stdout) {
		if (fflush(stdout) || ferror(stdout))
			err = fail("failed to write %s: %s",
				   esc(atomicfile__name(o)), strerror(errno));
		atomicfile__free(o);
		return err;
	}
	/* on disk before the name: whole after a crash too */
	if (o->tmp_name && (fflush(f) || fsync(fileno(f)))) {
		err = fail("failed to write %s: %s", esc(o->path), strerror(errno));
		fclose(f);
	} else if (fclose(f)) {
		err = fail("failed to write %s: %s", esc(o->path), strerror(errno));
	} else if (o->tmp_name &&
		   renameat(o->dirfd, o->tmp_name, o->dirfd, o->name) &&
		   (!o->replace || (errno != EISDIR && errno != ENOTEMPTY &&
				    errno != EEXIST) || exchange(o))) {
		err = fail("failed to rename %s to %s: %s", esc(o->tmp), esc(o->path),
			   strerror(errno));
	} else {
		atomicfile__free(o);
		return 0;
	}
	atomicfile__abort(o);
	return err;
}

void atomicfile__abort(struct atomicfile *o)
{
	if (!o)
		return;
	if (o->f && o->f != stdout)
		fclose(o->f);
	if (o->tmp_name)
		unlinkat(o->dirfd, o->tmp_name, 0);
	atomicfile__free(o);
}
