/* pq_api.h — libpq, loaded when the first PostgreSQL connection is made
 * rather than when the program starts: libpq and the 21 libraries it pulls
 * in (TLS, Kerberos, LDAP) cost every command about 11 M instructions of
 * symbol binding and 5 MiB of memory, which `tabletalk sql` on a SQLite
 * file and `--version` must not pay. The engine's files include this
 * header instead of <libpq-fe.h>: each PQ function name below is a macro
 * for the loaded function, so the calls read as libpq's own. Nothing may
 * call them before tt_pq_api_get() has succeeded once. */
#ifndef TT_PQ_API_H
#define TT_PQ_API_H

#include <libpq-fe.h>

#include "util/util.h"

typedef struct tt_pq_api {
  void (*clear)(PGresult *res);
  void (*finish)(PGconn *conn);
  ConnStatusType (*status)(const PGconn *conn);
  char *(*errorMessage)(const PGconn *conn);
  ExecStatusType (*resultStatus)(const PGresult *res);
  void (*freemem)(void *ptr);
  PGTransactionStatusType (*transactionStatus)(const PGconn *conn);
  PGresult *(*exec)(PGconn *conn, const char *query);
  int (*sendQuery)(PGconn *conn, const char *query);
  PGresult *(*execParams)(PGconn *conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat);
  char *(*escapeIdentifier)(PGconn *conn, const char *str, size_t len);
  char *(*escapeLiteral)(PGconn *conn, const char *str, size_t len);
  char *(*resultErrorMessage)(const PGresult *res);
  char *(*resultErrorField)(const PGresult *res, int fieldcode);
  PGconn *(*connectdb)(const char *conninfo);
  PGconn *(*connectdbParams)(const char *const *keywords, const char *const *values, int expand_dbname);
  unsigned char *(*unescapeBytea)(const unsigned char *strtext, size_t *retbuflen);
  int (*socket)(const PGconn *conn);
  int (*setSingleRowMode)(PGconn *conn);
  int (*sendQueryParams)(PGconn *conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat);
  int (*nfields)(const PGresult *res);
  int (*ntuples)(const PGresult *res);
  int (*isBusy)(PGconn *conn);
  char *(*getvalue)(const PGresult *res, int tup_num, int field_num);
  int (*getlength)(const PGresult *res, int tup_num, int field_num);
  int (*getisnull)(const PGresult *res, int tup_num, int field_num);
  PGresult *(*getResult)(PGconn *conn);
  PGcancel *(*getCancel)(PGconn *conn);
  Oid (*ftype)(const PGresult *res, int field_num);
  void (*freeCancel)(PGcancel *cancel);
  char *(*fname)(const PGresult *res, int field_num);
  char *(*db)(const PGconn *conn);
  char *(*user)(const PGconn *conn);
  int (*consumeInput)(PGconn *conn);
  int (*cancel)(PGcancel *cancel, char *errbuf, int errbufsize);
  char *(*cmdTuples)(PGresult *res);
  const char *(*parameterStatus)(const PGconn *conn, const char *paramName);
  int (*serverVersion)(const PGconn *conn);
  PQnoticeProcessor (*setNoticeProcessor)(PGconn *conn, PQnoticeProcessor proc, void *arg);
  PQnoticeReceiver (*setNoticeReceiver)(PGconn *conn, PQnoticeReceiver proc, void *arg);
} tt_pq_api;

/* The loaded library, or NULL (why in err: TT_ERR_UNAVAILABLE, what to
 * install in the hint) when libpq is not installed. Safe from any thread. */
const tt_pq_api *tt_pq_api_get(tt_error *err);

/* The table once loaded (NULL before): what the macros below call. */
extern const tt_pq_api *tt_pq;

#define PQclear (tt_pq->clear)
#define PQfinish (tt_pq->finish)
#define PQstatus (tt_pq->status)
#define PQerrorMessage (tt_pq->errorMessage)
#define PQresultStatus (tt_pq->resultStatus)
#define PQfreemem (tt_pq->freemem)
#define PQtransactionStatus (tt_pq->transactionStatus)
#define PQexec (tt_pq->exec)
#define PQsendQuery (tt_pq->sendQuery)
#define PQexecParams (tt_pq->execParams)
#define PQescapeIdentifier (tt_pq->escapeIdentifier)
#define PQescapeLiteral (tt_pq->escapeLiteral)
#define PQresultErrorMessage (tt_pq->resultErrorMessage)
#define PQresultErrorField (tt_pq->resultErrorField)
#define PQconnectdb (tt_pq->connectdb)
#define PQconnectdbParams (tt_pq->connectdbParams)
#define PQunescapeBytea (tt_pq->unescapeBytea)
#define PQsocket (tt_pq->socket)
#define PQsetSingleRowMode (tt_pq->setSingleRowMode)
#define PQsendQueryParams (tt_pq->sendQueryParams)
#define PQnfields (tt_pq->nfields)
#define PQntuples (tt_pq->ntuples)
#define PQisBusy (tt_pq->isBusy)
#define PQgetvalue (tt_pq->getvalue)
#define PQgetlength (tt_pq->getlength)
#define PQgetisnull (tt_pq->getisnull)
#define PQgetResult (tt_pq->getResult)
#define PQgetCancel (tt_pq->getCancel)
#define PQftype (tt_pq->ftype)
#define PQfreeCancel (tt_pq->freeCancel)
#define PQfname (tt_pq->fname)
#define PQdb (tt_pq->db)
#define PQuser (tt_pq->user)
#define PQconsumeInput (tt_pq->consumeInput)
#define PQcancel (tt_pq->cancel)
#define PQcmdTuples (tt_pq->cmdTuples)
#define PQparameterStatus (tt_pq->parameterStatus)
#define PQserverVersion (tt_pq->serverVersion)
#define PQsetNoticeProcessor (tt_pq->setNoticeProcessor)
#define PQsetNoticeReceiver (tt_pq->setNoticeReceiver)

#endif
