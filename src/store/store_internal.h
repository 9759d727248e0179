/* store_internal.h — what the files of the store layer share: the thread
 * store's SQLite handle (threads.c opens it and creates every table). */
#ifndef TT_STORE_INTERNAL_H
#define TT_STORE_INTERNAL_H

#include <sqlite3.h>

#include "store/store.h"

sqlite3 *tt_store_handle(tt_store *s);

#endif
