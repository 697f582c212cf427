// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * httpauth - who may read profiles: tokens, client certificates, Host and
 * Sec-Fetch-Site.  See httpauth.h.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "serve/httpauth.h"
#include "serve/mhd.h"
#include "serve/listen.h"
#include "lib/safeopen.h"
#include "lib/util.h"

#define TOKEN_MIN	16
#define TOKEN_MAX	4096
#define PEM_MAX		(1 << 20)

struct httpauth {
	char *token;			/* NULL: none asked */
	size_t token_len;
	char *cert, *key, *ca;		/* PEM; NULL: none */
	bool host_check;		/* plain TCP: Host must be an address */
};

/* The whole of a regular file of at most max bytes, NUL-terminated. */
static char *read_small(const char *what, const char *path, size_t max,
			size_t *len, mode_t *mode)
{
	struct stat st;
	char *buf;
	ssize_t n;
	size_t got = 0;
	int fd = safe_open(-1, path, &st);

	if (fd < 0) {
		fail("%s %s: %s", what, esc(path), safe_strerror(errno));
		return NULL;
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		fail("%s %s: larger than %zu bytes", what, esc(path), max);
		return NULL;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		close(fd);
		fail("%s %s: %s", what, esc(path), strerror(ENOMEM));
		return NULL;
	}
	while (got < (size_t)st.st_size &&
	       (n = read(fd, buf + got, st.st_size - got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	*len = got;
	if (mode)
		*mode = st.st_mode;
	return buf;
}

static int read_token(struct httpauth *a, const char *path)
{
	mode_t mode = 0;
	size_t len = 0, i;

	a->token = read_small("--http-token-file", path, TOKEN_MAX, &len,
			      &mode);
	if (!a->token)
		return -1;
	while (len && isspace((unsigned char)a->token[len - 1]))
		a->token[--len] = '\0';
	for (i = 0; i < len; i++)
		if (!isgraph((unsigned char)a->token[i]))
			return fail("--http-token-file %s: the token is one line of printable characters without spaces",
				    esc(path));
	if (len < TOKEN_MIN)
		return fail("--http-token-file %s: the token has %zu characters; at least %d are needed (e.g. head -c 32 /dev/urandom | base64)",
			    esc(path), len, TOKEN_MIN);
	if (mode & 0077)
		warning("--http-token-file %s can be read by others than its owner (mode %03o): chmod 600 it",
			esc(path), (unsigned int)(mode & 0777));
	a->token_len = len;
	return 0;
}

static int read_pem(char **out, const char *opt, const char *path)
{
	size_t len;

	*out = read_small(opt, path, PEM_MAX, &len, NULL);
	if (!*out)
		return -1;
	if (!strstr(*out, "-----BEGIN "))
		return fail("%s %s: not a PEM file", opt, esc(path));
	return 0;
}

struct httpauth *httpauth__new(const struct httpauth_opts *o,
			       const struct listen_addr *la)
{
	bool tls = o->tls_cert || o->tls_key;
	struct httpauth *a;

	if (tls && (!o->tls_cert || !o->tls_key)) {
		fail("--http-tls-cert and --http-tls-key go together");
		return NULL;
	}
	if (o->client_ca && !tls) {
		fail("--http-client-ca needs TLS: give --http-tls-cert and --http-tls-key too");
		return NULL;
	}
	if (o->insecure && (o->token_file || o->client_ca)) {
		fail("--http-insecure-no-auth contradicts --http-token-file and --http-client-ca");
		return NULL;
	}
	if (o->insecure && la->unix_socket) {
		fail("--http-insecure-no-auth is for TCP: a Unix socket is guarded by its file mode");
		return NULL;
	}
	if (!la->unix_socket && !o->token_file && !o->client_ca &&
	    !o->insecure) {
		fail("--http %s: TCP needs an authenticated client: --http-token-file FILE, or client certificates (--http-tls-cert, --http-tls-key, --http-client-ca); or serve a Unix socket (--http unix:/run/cprof/pprof.sock). --http-insecure-no-auth lets every local user read every process's stacks",
		     la->shown);
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		fail("%s", strerror(ENOMEM));
		return NULL;
	}
	if ((o->token_file && read_token(a, o->token_file)) ||
	    (o->tls_cert && read_pem(&a->cert, "--http-tls-cert", o->tls_cert)) ||
	    (o->tls_key && read_pem(&a->key, "--http-tls-key", o->tls_key)) ||
	    (o->client_ca && read_pem(&a->ca, "--http-client-ca", o->client_ca))) {
		httpauth__free(a);
		return NULL;
	}
	a->host_check = o->insecure;
	return a;
}

void httpauth__free(struct httpauth *a)
{
	if (!a)
		return;
	if (a->token)
		explicit_bzero(a->token, a->token_len);
	free(a->token);
	free(a->cert);
	if (a->key)
		explicit_bzero(a->key, strlen(a->key));
	free(a->key);
	free(a->ca);
	free(a);
}

const char *httpauth__tls_cert(const struct httpauth *a)
{
	return a->cert;
}

const char *httpauth__tls_key(const struct httpauth *a)
{
	return a->key;
}

const char *httpauth__client_ca(const struct httpauth *a)
{
	return a->ca;
}

/* Compare in time independent of where they differ. */
static bool same_secret(const char *x, size_t xlen, const char *y,
			size_t ylen)
{
	unsigned char d = xlen != ylen;
	size_t i;

	for (i = 0; i < xlen; i++)
		d |= (unsigned char)x[i] ^ (unsigned char)y[i % (ylen ? ylen : 1)];
	return !d && ylen;
}

static bool token_ok(const struct httpauth *a, struct MHD_Connection *c)
{
	const char *h;
	size_t len;

	h = sym_MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					    MHD_HTTP_HEADER_AUTHORIZATION);
	if (!h || strncasecmp(h, "Bearer ", 7))
		return false;
	h += 7;
	while (*h == ' ' || *h == '\t')
		h++;
	/*
	 * as a field value, without the blanks around it: a client that
	 * sends a token file's line as it is (its trailing spaces) is served
	 */
	len = strlen(h);
	while (len && (h[len - 1] == ' ' || h[len - 1] == '\t'))
		len--;
	return same_secret(a->token, a->token_len, h, len);
}

/*
 * A certificate of the client CA's, whose extended key usage, if it has
 * any (its issuers' too), allows a TLS client: a server's certificate
 * from the same CA is not a client's.
 */
static bool client_cert_ok(struct MHD_Connection *c)
{
	gnutls_typed_vdata_st purpose = {
		.type = GNUTLS_DT_KEY_PURPOSE_OID,
		.data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT,
	};
	const union MHD_ConnectionInfo *ci;
	unsigned int status = ~0u;

	ci = sym_MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci || !ci->tls_session)
		return false;
	if (sym_gnutls_certificate_type_get(ci->tls_session) != GNUTLS_CRT_X509)
		return false;
	return !sym_gnutls_certificate_verify_peers(ci->tls_session, &purpose, 1,
						    &status) && !status;
}

/* Host: an IP address or localhost, with or without a port. */
static bool host_is_address(const char *host)
{
	char buf[64], *end;
	unsigned char addr[16];
	size_t len;

	if (host[0] == '[') {
		end = strchr(host, ']');
		len = end ? (size_t)(end - host - 1) : 0;
		if (!end || !len || len >= sizeof(buf) ||
		    (end[1] && end[1] != ':'))
			return false;
		memcpy(buf, host + 1, len);
		buf[len] = '\0';
		return inet_pton(AF_INET6, buf, addr) == 1;
	}
	len = strcspn(host, ":");
	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, host, len);
	buf[len] = '\0';
	return !strcasecmp(buf, "localhost") ||
	       inet_pton(AF_INET, buf, addr) == 1;
}

static unsigned int check(const struct httpauth *a, struct MHD_Connection *c,
			  char *why, size_t size)
{
	const char *site = sym_MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							    "Sec-Fetch-Site");
	const char *host;

	if (site && strcmp(site, "same-origin") && strcmp(site, "none")) {
		snprintf(why, size, "refused: a request made by another site's page (Sec-Fetch-Site: %s)",
			 esc_n(site, 32));
		return MHD_HTTP_FORBIDDEN;
	}
	if (a->host_check) {
		host = sym_MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_HOST);
		if (host && !host_is_address(host)) {
			snprintf(why, size, "refused: Host %s is not an IP address or localhost (a name may lead a web page here)",
				 esc_n(host, 64));
			return MHD_HTTP_FORBIDDEN;
		}
	}
	if (a->ca && !client_cert_ok(c)) {
		snprintf(why, size, "refused: no client certificate signed by the server's --http-client-ca for TLS clients");
		return MHD_HTTP_FORBIDDEN;
	}
	if (a->token && !token_ok(a, c)) {
		snprintf(why, size, "unauthorized: send the token of --http-token-file as Authorization: Bearer TOKEN");
		return MHD_HTTP_UNAUTHORIZED;
	}
	return 0;
}

unsigned int httpauth__check(const struct httpauth *a,
			     struct MHD_Connection *c, char *why, size_t size)
{
	/* the reason quotes the client as esc_n() shows it */
	return check(a, c, why, size);
}
