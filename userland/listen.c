// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * listen - parse --http ADDR and make its listening socket.  See listen.h.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "listen.h"
#include "util.h"

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

static int open_unix(const struct listen_addr *la, gid_t gid)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, err;

	/* a stale socket from an earlier run goes; anything else stays */
	if (!lstat(la->path, &st)) {
		if (!S_ISSOCK(st.st_mode))
			return fail("failed to listen on %s: the path exists and is not a socket",
				    la->shown);
		if (unlink(la->path))
			return fail("failed to listen on %s: cannot remove the old socket: %s",
				    la->shown, strerror(errno));
	}
	memcpy(sun.sun_path, la->path, strlen(la->path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("failed to listen on %s: %s", la->shown,
			    strerror(errno));
	/* no moment when others may connect: made 0600 by bind() itself */
	old = umask(0177);
	err = bind(fd, (struct sockaddr *)&sun, sizeof(sun)) ? errno : 0;
	umask(old);
	if (!err && gid != (gid_t)-1 &&
	    (chown(la->path, (uid_t)-1, gid) || chmod(la->path, 0660)))
		err = errno;
	if (!err && listen(fd, 16))
		err = errno;
	if (err) {
		close(fd);
		return fail("failed to listen on %s: %s", la->shown,
			    strerror(err));
	}
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
		if (!bind(fd, a->ai_addr, a->ai_addrlen) && !listen(fd, 16))
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

int listen__open(const struct listen_addr *la, gid_t gid)
{
	return la->unix_socket ? open_unix(la, gid) : open_tcp(la);
}

void listen__close(const struct listen_addr *la, int fd)
{
	if (fd >= 0)
		close(fd);
	if (la->unix_socket)
		unlink(la->path);
}
