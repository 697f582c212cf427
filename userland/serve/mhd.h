/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mhd - libmicrohttpd and GnuTLS, loaded when `cprof-dump --http` starts.
 *
 * cprof-dump is not linked with them: their constructors (GnuTLS builds
 * its ASN.1 trees) would cost every conversion, and only the server uses
 * them.  mhd__load() opens libmicrohttpd.so.12 and libgnutls.so.30 and
 * resolves every function serve/ calls into the pointers below, each of
 * the type of the library header's own prototype: serve/ calls sym_F
 * where it would call F.  They stay loaded until the process exits.
 */
#ifndef CPROF_MHD_H
#define CPROF_MHD_H

#include <microhttpd.h>
#include <gnutls/gnutls.h>

/*
 * Open both libraries and resolve every pointer, once (later calls return
 * at once).  0; or -1 after printing one line naming the library and what
 * it lacks, with every pointer left NULL.
 */
int mhd__load(void);

/* Every function serve/ calls: X(library, function). */
#define MHD_FUNCTIONS(X)					\
	X(MHD, MHD_start_daemon)				\
	X(MHD, MHD_quiesce_daemon)				\
	X(MHD, MHD_stop_daemon)					\
	X(MHD, MHD_get_daemon_info)				\
	X(MHD, MHD_get_connection_info)				\
	X(MHD, MHD_get_connection_values_n)			\
	X(MHD, MHD_lookup_connection_value)			\
	X(MHD, MHD_create_response_from_buffer)			\
	X(MHD, MHD_add_response_header)				\
	X(MHD, MHD_queue_response)				\
	X(MHD, MHD_destroy_response)				\
	X(GNUTLS, gnutls_certificate_type_get)			\
	X(GNUTLS, gnutls_certificate_verify_peers)

#define MHD_DECLARE(lib, f) extern __typeof__(f) *sym_##f;
MHD_FUNCTIONS(MHD_DECLARE)
#undef MHD_DECLARE

#endif /* CPROF_MHD_H */
