/* pq_api.c — loading libpq on first use with dlopen (see pq_api.h), once
 * per process. */
#include "db/pg/pq_api.h"

#include <pthread.h>

const tt_pq_api *tt_pq;
static tt_pq_api tt_pq_loaded;
static tt_error tt_pq_error;
static pthread_once_t tt_pq_once = PTHREAD_ONCE_INIT;

static void tt_pq_load(void) {
  static const char *const files[] = {"libpq.so.5", "libpq.so", NULL};
  const tt_dl_sym syms[] = {
      {"clear", &tt_pq_loaded.clear},
      {"finish", &tt_pq_loaded.finish},
      {"status", &tt_pq_loaded.status},
      {"errorMessage", &tt_pq_loaded.errorMessage},
      {"resultStatus", &tt_pq_loaded.resultStatus},
      {"freemem", &tt_pq_loaded.freemem},
      {"transactionStatus", &tt_pq_loaded.transactionStatus},
      {"exec", &tt_pq_loaded.exec},
      {"sendQuery", &tt_pq_loaded.sendQuery},
      {"execParams", &tt_pq_loaded.execParams},
      {"escapeIdentifier", &tt_pq_loaded.escapeIdentifier},
      {"escapeLiteral", &tt_pq_loaded.escapeLiteral},
      {"resultErrorMessage", &tt_pq_loaded.resultErrorMessage},
      {"resultErrorField", &tt_pq_loaded.resultErrorField},
      {"connectdb", &tt_pq_loaded.connectdb},
      {"connectdbParams", &tt_pq_loaded.connectdbParams},
      {"unescapeBytea", &tt_pq_loaded.unescapeBytea},
      {"socket", &tt_pq_loaded.socket},
      {"setSingleRowMode", &tt_pq_loaded.setSingleRowMode},
      {"sendQueryParams", &tt_pq_loaded.sendQueryParams},
      {"nfields", &tt_pq_loaded.nfields},
      {"ntuples", &tt_pq_loaded.ntuples},
      {"isBusy", &tt_pq_loaded.isBusy},
      {"getvalue", &tt_pq_loaded.getvalue},
      {"getlength", &tt_pq_loaded.getlength},
      {"getisnull", &tt_pq_loaded.getisnull},
      {"getResult", &tt_pq_loaded.getResult},
      {"getCancel", &tt_pq_loaded.getCancel},
      {"ftype", &tt_pq_loaded.ftype},
      {"freeCancel", &tt_pq_loaded.freeCancel},
      {"fname", &tt_pq_loaded.fname},
      {"db", &tt_pq_loaded.db},
      {"user", &tt_pq_loaded.user},
      {"consumeInput", &tt_pq_loaded.consumeInput},
      {"cancel", &tt_pq_loaded.cancel},
      {"cmdTuples", &tt_pq_loaded.cmdTuples},
      {"parameterStatus", &tt_pq_loaded.parameterStatus},
      {"serverVersion", &tt_pq_loaded.serverVersion},
      {"setNoticeProcessor", &tt_pq_loaded.setNoticeProcessor},
      {"setNoticeReceiver", &tt_pq_loaded.setNoticeReceiver},
  };
  char why[200];
  switch (tt_dl_load(files, "PQ", syms, sizeof syms / sizeof syms[0], why, sizeof why)) {
  case TT_DL_NO_LIBRARY:
    tt_error_set(&tt_pq_error, TT_ERR_UNAVAILABLE,
                 "cannot load libpq, PostgreSQL's client library (%s)", why);
    tt_error_hint(&tt_pq_error, "install it with: apt-get install libpq5");
    return;
  case TT_DL_NO_SYMBOL:
    tt_error_set(&tt_pq_error, TT_ERR_UNAVAILABLE, "libpq lacks %s", why);
    tt_error_hint(&tt_pq_error, "install libpq 15 or later (apt-get install libpq5)");
    return;
  case TT_DL_OK: break;
  }
  tt_pq = &tt_pq_loaded; /* the library stays loaded for good */
}

const tt_pq_api *tt_pq_api_get(tt_error *err) {
  pthread_once(&tt_pq_once, tt_pq_load);
  if (!tt_pq && err) *err = tt_pq_error;
  return tt_pq;
}
