/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * httpauth - who may read profiles from `cprof-dump --http`.
 *
 * The module gives profiles to CAP_PERFMON only; the server runs as root,
 * so it must not give them to any process that reaches its socket.
 *
 *  - A Unix socket (the default way) is guarded by its file mode: 0600,
 *    or 0660 with --http-group.
 *  - TCP needs an authenticated client: a bearer token read from a file
 *    (--http-token-file; the "authorization" of Prometheus-style scrape
 *    configs) and/or a TLS client certificate signed by --http-client-ca
 *    (with --http-tls-cert and --http-tls-key: "tls_config").  Each one
 *    configured is required.
 *  - Plain TCP without either only with --http-insecure-no-auth; then the
 *    Host header must be an IP address or localhost, so that a web page
 *    cannot reach the server through a name it controls (DNS rebinding).
 *  - Always: a request a browser marks as sent by another site
 *    (Sec-Fetch-Site: cross-site or same-site, e.g. an <img> on a web
 *    page) is refused.
 */
#ifndef CPROF_HTTPAUTH_H
#define CPROF_HTTPAUTH_H

#include <stdbool.h>

#include <microhttpd.h>

struct httpauth_opts {
	const char *token_file;		/* --http-token-file */
	const char *tls_cert, *tls_key;	/* --http-tls-cert, --http-tls-key */
	const char *client_ca;		/* --http-client-ca */
	bool insecure;			/* --http-insecure-no-auth */
};

struct httpauth;
struct listen_addr;

/*
 * Check o against where the server listens and read its files (regular
 * files only).  NULL after printing why.
 */
struct httpauth *httpauth__new(const struct httpauth_opts *o,
			       const struct listen_addr *la);
void httpauth__free(struct httpauth *a);

/* The PEM texts for MHD's TLS options, or NULL (no TLS / no client CA). */
const char *httpauth__tls_cert(const struct httpauth *a);
const char *httpauth__tls_key(const struct httpauth *a);
const char *httpauth__client_ca(const struct httpauth *a);

/*
 * May this request be served?  0 if so; else the HTTP status to answer
 * (401: ask for the token, 403: refused), with the reason in why.
 */
unsigned int httpauth__check(const struct httpauth *a,
			     struct MHD_Connection *c, char *why, size_t size);

#endif /* CPROF_HTTPAUTH_H */
