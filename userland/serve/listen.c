// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * listen - parse --http ADDR and make its listening socket.  See listen.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "serve/listen.h"
#include "lib/util.h"

#define USAGE	"want unix:PATH, /PATH, HOST:PORT, [ADDR]:PORT, :PORT or PORT"

static int parse_unix(const char *addr, const char *path,
		      struct listen_addr *la)
{
	if (path[0] != '/')
		return fail("invalid --http address '%s': a Unix socket's path must be absolute",
			    esc(addr));
	if (strlen(path) >= sizeof(la->path))
		return fail("invalid --http address '%s': a Unix socket's path has at most %zu bytes",
			    esc(addr), sizeof(la->path) - 1);
	la->unix_socket = true;
	snprintf(la->path, sizeof(la->path), "%s", path);
	la->base = strrchr(la->path, '/') + 1;
	if (!*la->base)
		return fail("invalid --http address '%s': a Unix socket's path must name a file, not a directory",
			    esc(addr));
	snprintf(la->shown, sizeof(la->shown), "unix:%s", esc(path));
	return 0;
}

static bool all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

int listen__parse(const char *orig, struct listen_addr *la)
{
	const char *addr = orig, *colon, *port;
	size_t hlen;
	long n;

	memset(la, 0, sizeof(*la));
	la->dir_fd = -1;
	if (!strncmp(orig, "unix:", 5))
		return parse_unix(orig, orig + 5, la);
	if (orig[0] == '/')
		return parse_unix(orig, orig, la);

	colon = strrchr(addr, ':');
	port = colon ? colon + 1 : addr;
	hlen = colon ? (size_t)(colon - addr) : 0;
	if (addr[0] == '[') {
		/* [V6ADDR]:PORT */
		if (!colon || hlen < 2 || addr[hlen - 1] != ']')
			return fail("invalid --http address '%s': " USAGE, esc(orig));
		addr++;
		hlen -= 2;
	} else if (colon && memchr(addr, ':', hlen)) {
		return fail("invalid --http address '%s': an IPv6 address goes in brackets, [::1]:6060",
			    esc(orig));
	}
	if (!all_digits(port) ||
	    parse_long_quiet(port, 1, 65535, &n) != PARSE_OK)
		return fail("invalid --http address '%s': the port must be a number from 1 to 65535; " USAGE,
			    esc(orig));
	if (hlen >= sizeof(la->host))
		return fail("invalid --http address: the host name is too long");
	if (hlen) {
		memcpy(la->host, addr, hlen);
		la->host[hlen] = '\0';
	} else {
		/* nothing listens beyond this machine unless asked */
		snprintf(la->host, sizeof(la->host), "127.0.0.1");
	}
	snprintf(la->port, sizeof(la->port), "%ld", n);
	snprintf(la->shown, sizeof(la->shown),
		 strchr(la->host, ':') ? "[%s]:%s" : "%s:%s", esc(la->host),
		 esc(la->port));
	return 0;
}

bool listen__loopback(const struct listen_addr *la)
{
	return !la->unix_socket &&
	       (!strncmp(la->host, "127.", 4) || !strcmp(la->host, "::1") ||
		!strcmp(la->host, "localhost"));
}

/*
 * The socket is bound in a directory of its own, made 0700 next to PATH,
 * given its mode (by the umask around bind()) and group there, where no
 * one else can swap it for a symlink, and then renamed to PATH without
 * replacing anything.  Everything goes through descriptors of the two
 * directories: nothing follows a name another user could change.
 */
static int bind_private(const struct listen_addr *la, int fd, int dir,
			const char *priv, gid_t gid, struct stat *st)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat pst;
	mode_t old;
	int pfd, err = 0;

	pfd = openat(dir, priv, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return errno;
	/* the one made above, not one a user put in its place meanwhile */
	if (fstat(pfd, &pst) || pst.st_uid != geteuid() ||
	    (pst.st_mode & 0777) != 0700) {
		close(pfd);
		return EPERM;
	}
	snprintf(sun.sun_path, sizeof(sun.sun_path), "/proc/self/fd/%d/s",
		 pfd);
	old = umask(gid == (gid_t)-1 ? 0177 : 0117);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)))
		err = errno;
	umask(old);
	if (!err && gid != (gid_t)-1 &&
	    fchownat(pfd, "s", (uid_t)-1, gid, AT_SYMLINK_NOFOLLOW))
		err = errno;
	if (!err && listen(fd, SOMAXCONN))
		err = errno;
	if (!err && fstatat(pfd, "s", st, AT_SYMLINK_NOFOLLOW))
		err = errno;
	if (!err && renameat2(pfd, "s", dir, la->base, RENAME_NOREPLACE))
		err = errno;
	if (err)
		unlinkat(pfd, "s", 0);
	close(pfd);
	return err;
}

static int open_unix(struct listen_addr *la, gid_t gid)
{
	char dname[sizeof(la->path)], priv[64];
	struct stat st;
	int fd, err, i;

	snprintf(dname, sizeof(dname), "%.*s",
		 (int)(la->base - la->path > 1 ? la->base - la->path - 1 : 1),
		 la->path);
	la->dir_fd = open(dname, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (la->dir_fd < 0)
		return fail("failed to listen on %s: %s: %s", la->shown,
			    esc(dname), strerror(errno));
	/* a stale socket from an earlier run goes; anything else stays */
	if (!fstatat(la->dir_fd, la->base, &st, AT_SYMLINK_NOFOLLOW)) {
		if (!S_ISSOCK(st.st_mode))
			return fail("failed to listen on %s: the path exists and is not a socket",
				    la->shown);
		if (unlinkat(la->dir_fd, la->base, 0))
			return fail("failed to listen on %s: cannot remove the old socket: %s",
				    la->shown, strerror(errno));
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("failed to listen on %s: %s", la->shown,
			    strerror(errno));
	for (i = 0, err = EEXIST; i < 100 && err == EEXIST; i++) {
		snprintf(priv, sizeof(priv), ".%s.%d.%d", PROG_NAME,
			 (int)getpid(), i);
		err = mkdirat(la->dir_fd, priv, 0700) ? errno : 0;
	}
	if (!err) {
		err = bind_private(la, fd, la->dir_fd, priv, gid, &st);
		unlinkat(la->dir_fd, priv, AT_REMOVEDIR);
	}
	if (err) {
		close(fd);
		return fail("failed to listen on %s: %s", la->shown,
			    err == EEXIST ? "the path appeared meanwhile" :
			    err == EPERM ? "its directory was changed meanwhile" :
			    strerror(err));
	}
	la->dev = st.st_dev;
	la->ino = st.st_ino;
	return fd;
}

static int open_tcp(const struct listen_addr *la)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	};
	struct addrinfo *ai = NULL, *a;
	int fd = -1, one = 1, rc, err = 0;

	rc = getaddrinfo(la->host, la->port, &hints, &ai);
	if (rc)
		return fail("invalid --http address '%s': %s", la->shown,
			    gai_strerror(rc));
	for (a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC,
			    a->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, a->ai_addr, a->ai_addrlen) && !listen(fd, SOMAXCONN))
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return fail("failed to listen on %s: %s", la->shown,
			    strerror(err));
	return fd;
}

int listen__open(struct listen_addr *la, gid_t gid)
{
	int fd;

	if (!la->unix_socket)
		return open_tcp(la);
	fd = open_unix(la, gid);
	if (fd < 0 && la->dir_fd >= 0) {
		close(la->dir_fd);
		la->dir_fd = -1;
	}
	return fd;
}

void listen__close(struct listen_addr *la, int fd)
{
	struct stat st;

	if (fd >= 0)
		close(fd);
	if (la->dir_fd < 0)
		return;
	/* the socket made, not what a user may have put at its path since */
	if (!fstatat(la->dir_fd, la->base, &st, AT_SYMLINK_NOFOLLOW) &&
	    st.st_dev == la->dev && st.st_ino == la->ino)
		unlinkat(la->dir_fd, la->base, 0);
	close(la->dir_fd);
	la->dir_fd = -1;
}
