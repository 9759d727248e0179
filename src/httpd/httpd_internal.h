/* httpd_internal.h — what httpd.c hands to libmicrohttpd on the guard's
 * behalf (guard.c): the callbacks that note connections as MHD accepts and
 * closes them, learn each connection's thread when its request line
 * arrives, and read MHD's log for the errors it answers itself. */
#ifndef TT_HTTPD_INTERNAL_H
#define TT_HTTPD_INTERNAL_H

#include "httpd/httpd.h"

/* MHD_OPTION_NOTIFY_CONNECTION, with the guard as cls. */
void tt_httpd_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                           enum MHD_ConnectionNotificationCode toe);
/* MHD_OPTION_URI_LOG_CALLBACK, with the guard as cls: returns NULL, so the
 * first call of the access handler still sees *con_cls NULL. */
void *tt_httpd_guard_uri(void *cls, const char *uri, struct MHD_Connection *c);
/* MHD_OPTION_EXTERNAL_LOGGER, with the guard as cls. */
void tt_httpd_guard_log(void *cls, const char *fmt, va_list ap) TT_PRINTF(2, 0);

#endif
