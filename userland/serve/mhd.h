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

#define MHD_SYM(f) extern __typeof__(f) *sym_##f

MHD_SYM(MHD_start_daemon);
MHD_SYM(MHD_quiesce_daemon);
MHD_SYM(MHD_stop_daemon);
MHD_SYM(MHD_get_daemon_info);
MHD_SYM(MHD_get_connection_info);
MHD_SYM(MHD_get_connection_values_n);
MHD_SYM(MHD_lookup_connection_value);
MHD_SYM(MHD_create_response_from_buffer);
MHD_SYM(MHD_add_response_header);
MHD_SYM(MHD_queue_response);
MHD_SYM(MHD_destroy_response);
MHD_SYM(gnutls_certificate_type_get);
MHD_SYM(gnutls_certificate_verify_peers);

#undef MHD_SYM

#endif /* CPROF_MHD_H */
