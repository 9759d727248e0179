/* mhd_api.h — libmicrohttpd, loaded with dlopen when `serve-mcp --http`
 * starts: the library pulls in GnuTLS and half a dozen more, which every
 * other command (and the stdio server) would pay for at start-up if it
 * were linked. Only the functions the HTTP transport uses are resolved. */
#ifndef TT_MHD_API_H
#define TT_MHD_API_H

#include <stdarg.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <microhttpd.h>

#include "util/util.h"

typedef struct tt_mhd_api {
  struct MHD_Daemon *(*start_daemon)(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
                                     void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...);
  void (*stop_daemon)(struct MHD_Daemon *d);
  const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *d, enum MHD_DaemonInfoType t, ...);
  const char *(*lookup_connection_value)(struct MHD_Connection *c, enum MHD_ValueKind kind,
                                         const char *key);
  const union MHD_ConnectionInfo *(*get_connection_info)(struct MHD_Connection *c,
                                                         enum MHD_ConnectionInfoType t, ...);
  struct MHD_Response *(*create_response_from_buffer)(size_t size, void *buffer,
                                                      enum MHD_ResponseMemoryMode mode);
  struct MHD_Response *(*create_response_from_callback)(uint64_t size, size_t block_size,
                                                        MHD_ContentReaderCallback crc, void *crc_cls,
                                                        MHD_ContentReaderFreeCallback crfc);
  enum MHD_Result (*add_response_header)(struct MHD_Response *r, const char *header,
                                         const char *content);
  enum MHD_Result (*queue_response)(struct MHD_Connection *c, unsigned int status,
                                    struct MHD_Response *r);
  void (*destroy_response)(struct MHD_Response *r);
  enum MHD_Result (*set_connection_option)(struct MHD_Connection *c,
                                           enum MHD_CONNECTION_OPTION option, ...);
} tt_mhd_api;

/* The loaded library, or NULL with the reason (and the package to
 * install) in err. */
const tt_mhd_api *tt_mhd_api_get(tt_error *err);

#endif
