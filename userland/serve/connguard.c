// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * connguard - pending connections of --http: limits, deadline, and the
 * counted log of refusals.  See connguard.h.
 *
 * The connections are few (libmicrohttpd's limit): a list walked whole
 * under one lock does.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/connguard.h"
#include "lib/util.h"

struct connguard_conn {
	int fd;				/* -1 once shut down */
	double since;			/* monotonic_seconds() */
	bool pending;			/* counted in the limits */
	unsigned char net[17];		/* family, then the /24 or /64 */
	unsigned char addr[17];		/* family, then the address or /64 */
	struct connguard_conn *next, **pprev;
};

/* New connections from one address (IPv6: one /64): a token bucket. */
struct source {
	unsigned char addr[17];
	double tokens, last;
};

struct connguard {
	pthread_mutex_t lock;
	struct source src[CONNGUARD_SOURCES];	/* the latest seen */
	struct connguard_conn *conns;
	unsigned int pending;		/* pending and not shut down */
	/* since the last counts line */
	double window;			/* when it began */
	unsigned long lines;		/* refusal lines printed in it */
	unsigned long unsaid;		/* ... and not printed */
	unsigned long late, crowded;	/* connections shut down */
	unsigned long fast;		/* refused: too many too soon */
};

struct connguard *connguard__new(void)
{
	struct connguard *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	pthread_mutex_init(&g->lock, NULL);
	g->window = monotonic_seconds();
	return g;
}

void connguard__free(struct connguard *g)
{
	struct connguard_conn *c, *next;

	if (!g)
		return;
	for (c = g->conns; c; c = next) {
		next = c->next;
		free(c);
	}
	pthread_mutex_destroy(&g->lock);
	free(g);
}

/*
 * The network of sa (an IPv4 /24, mapped into IPv6 too; an IPv6 /64) and
 * its address (IPv6: the /64, which one host may hold whole).
 */
static void net_of(const struct sockaddr *sa, unsigned char net[17],
		   unsigned char addr[17])
{
	static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };
	const struct sockaddr_in6 *s6 = (const void *)sa;
	const struct sockaddr_in *s4 = (const void *)sa;

	memset(net, 0, 17);
	memset(addr, 0, 17);
	if (!sa)
		return;
	if (sa->sa_family == AF_INET6 &&
	    !memcmp(s6->sin6_addr.s6_addr, mapped, sizeof(mapped))) {
		net[0] = AF_INET;
		memcpy(addr + 1, s6->sin6_addr.s6_addr + 12, 4);
	} else if (sa->sa_family == AF_INET6) {
		net[0] = AF_INET6;
		memcpy(addr + 1, s6->sin6_addr.s6_addr, 8);
	} else if (sa->sa_family == AF_INET) {
		net[0] = AF_INET;
		memcpy(addr + 1, &s4->sin_addr.s_addr, 4);
	} else {
		net[0] = (unsigned char)sa->sa_family;
	}
	addr[0] = net[0];
	memcpy(net + 1, addr + 1, net[0] == AF_INET ? 3 : 8);
}

static void shut(struct connguard *g, struct connguard_conn *c)
{
	shutdown(c->fd, SHUT_RDWR);	/* its thread reads the end, closes */
	c->fd = -1;
	c->pending = false;
	g->pending--;
}

/* Pending connections sharing a key (a network or an address). */
struct tally {
	const unsigned char *key;
	unsigned int n;
	struct connguard_conn *oldest;
};

/*
 * The key at off of the pending connections (of net only, if not NULL)
 * that the most share, and the oldest of them; NULL if none.
 */
static struct tally *most(const struct connguard *g, const unsigned char *net,
			  size_t off, struct tally *t)
{
	struct tally *best = NULL;
	struct connguard_conn *c;
	unsigned int i, nt = 0;
	const unsigned char *key;

	for (c = g->conns; c; c = c->next) {
		if (!c->pending || (net && memcmp(c->net, net, 17)))
			continue;
		key = (const unsigned char *)c + off;
		for (i = 0; i < nt && memcmp(t[i].key, key, 17); i++)
			;
		if (i == nt) {
			if (nt == CONNGUARD_PENDING_MAX)
				continue;	/* cannot be: all counted */
			t[nt++] = (struct tally){ .key = key };
		}
		if (!t[i].oldest || c->since < t[i].oldest->since)
			t[i].oldest = c;
		t[i].n++;
	}
	for (i = 0; i < nt; i++)
		if (!best || t[i].n > best->n ||
		    (t[i].n == best->n &&
		     t[i].oldest->since < best->oldest->since))
			best = &t[i];
	return best;
}

/*
 * The connection to shut down for one more from net (NULL: from any):
 * of the network holding most, the oldest of the address holding most
 * of it.  A client sending its request at once is never that, however
 * many others trickle theirs from its network: they hold more.
 */
static struct connguard_conn *victim(const struct connguard *g,
				     const unsigned char *net)
{
	struct tally t[CONNGUARD_PENDING_MAX], *best;

	if (!net) {
		best = most(g, NULL, offsetof(struct connguard_conn, net), t);
		if (!best)
			return NULL;
		net = best->oldest->net;
	}
	best = most(g, net, offsetof(struct connguard_conn, addr), t);
	return best ? best->oldest : NULL;
}

/* How many pending connections are from net. */
static unsigned int from_net(const struct connguard *g,
			     const unsigned char *net)
{
	const struct connguard_conn *c;
	unsigned int n = 0;

	for (c = g->conns; c; c = c->next)
		n += c->pending && !memcmp(c->net, net, 17);
	return n;
}

bool connguard__admit(struct connguard *g, const struct sockaddr *sa)
{
	unsigned char net[17], addr[17];
	double now = monotonic_seconds();
	struct source *src, *s = NULL;
	bool ok;

	net_of(sa, net, addr);
	pthread_mutex_lock(&g->lock);
	for (src = g->src; src < g->src + CONNGUARD_SOURCES; src++) {
		if (!memcmp(src->addr, addr, sizeof(addr))) {
			s = src;
			break;
		}
		if (!s || src->last < s->last)
			s = src;	/* else the one seen least lately */
	}
	if (memcmp(s->addr, addr, sizeof(addr))) {
		memcpy(s->addr, addr, sizeof(addr));
		s->tokens = CONNGUARD_BURST_CONNS;
		s->last = now;
	}
	s->tokens += (now - s->last) * CONNGUARD_RATE;
	if (s->tokens > CONNGUARD_BURST_CONNS)
		s->tokens = CONNGUARD_BURST_CONNS;
	s->last = now;
	ok = s->tokens >= 1;
	if (ok)
		s->tokens--;
	else
		g->fast++;
	pthread_mutex_unlock(&g->lock);
	return ok;
}

struct connguard_conn *connguard__add(struct connguard *g, int fd,
				      const struct sockaddr *sa)
{
	struct connguard_conn *c = calloc(1, sizeof(*c)), *v = NULL;

	if (!c)
		return NULL;
	c->fd = fd;
	c->since = monotonic_seconds();
	c->pending = true;
	net_of(sa, c->net, c->addr);
	pthread_mutex_lock(&g->lock);
	if (from_net(g, c->net) >= CONNGUARD_PER_NET)
		v = victim(g, c->net);
	else if (g->pending >= CONNGUARD_PENDING_MAX)
		v = victim(g, NULL);
	if (v) {
		shut(g, v);
		g->crowded++;
	}
	c->next = g->conns;
	if (c->next)
		c->next->pprev = &c->next;
	c->pprev = &g->conns;
	g->conns = c;
	g->pending++;
	pthread_mutex_unlock(&g->lock);
	return c;
}

void connguard__authenticated(struct connguard *g, struct connguard_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&g->lock);
	if (c->pending) {
		c->pending = false;
		g->pending--;
	}
	pthread_mutex_unlock(&g->lock);
}

void connguard__remove(struct connguard *g, struct connguard_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&g->lock);
	if (c->pending)
		g->pending--;
	*c->pprev = c->next;
	if (c->next)
		c->next->pprev = c->pprev;
	pthread_mutex_unlock(&g->lock);
	free(c);
}

void connguard__tick(struct connguard *g)
{
	double now = monotonic_seconds();
	unsigned long late, crowded, fast, unsaid;
	struct connguard_conn *c;

	pthread_mutex_lock(&g->lock);
	for (c = g->conns; c; c = c->next)
		if (c->pending && now - c->since >= CONNGUARD_DEADLINE_S) {
			shut(g, c);
			g->late++;
		}
	if (now - g->window < CONNGUARD_LOG_S) {
		pthread_mutex_unlock(&g->lock);
		return;
	}
	late = g->late;
	crowded = g->crowded;
	fast = g->fast;
	unsaid = g->unsaid;
	g->late = g->crowded = g->fast = g->unsaid = g->lines = 0;
	g->window = now;
	pthread_mutex_unlock(&g->lock);
	if (late || crowded || fast || unsaid)
		fprintf(stderr, PROG_NAME ": in the last %.0f s: %lu connection%s closed without a whole request %.0f s after connecting, %lu closed for newer ones (more than %d waiting for theirs, or %d from one network), %lu refused (more than %d a second from one address), %lu refusal%s not shown\n",
			CONNGUARD_LOG_S, late, late == 1 ? "" : "s",
			CONNGUARD_DEADLINE_S, crowded, CONNGUARD_PENDING_MAX,
			CONNGUARD_PER_NET, fast, CONNGUARD_RATE, unsaid,
			unsaid == 1 ? "" : "s");
}

/* May one more refusal line be printed now?  Counts it if not. */
static bool may_say(struct connguard *g)
{
	bool say;

	pthread_mutex_lock(&g->lock);
	say = g->lines < CONNGUARD_BURST;
	if (say)
		g->lines++;
	else
		g->unsaid++;
	pthread_mutex_unlock(&g->lock);
	return say;
}

void connguard__refusal(struct connguard *g, const char *fmt, ...)
{
	va_list ap;

	if (!may_say(g))
		return;
	va_start(ap, fmt);
	fputs(PROG_NAME ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void connguard__mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];

	if (!may_say(cls))
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	/* its own line's end goes; it may quote a client's bytes */
	line[strcspn(line, "\n")] = '\0';
	fprintf(stderr, PROG_NAME ": libmicrohttpd: %s\n", esc(line));
}
