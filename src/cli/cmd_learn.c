/* cmd_learn.c — `tabletalk learn DB "question" "SQL"`: add a solved
 * example to the knowledge file beside the database (or --knowledge FILE),
 * after running the SQL through the guard so that only read-only SQL that
 * works is kept. The database is never written; the knowledge file is
 * rewritten whole (a temporary file renamed over it), under a lock on its
 * folder so that two learns at once do not lose an example. */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const tt_opt tt_learn_own[] = {
    {TT_OPT_KNOWLEDGE, "knowledge", 'k', TT_ARG_REQUIRED, "FILE", "the knowledge file (DB.knowledge.json)", TT_COMPLETE_FILE, NULL,
     "The knowledge file to add to (default: *DB*.knowledge.json beside the database)."},
    TT_OPT_DB_URL_ENTRY,
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt_group tt_learn_group = {NULL, false, tt_learn_own};
static const tt_opt_group *const tt_learn_groups[] = {&tt_learn_group, NULL};
const tt_cmd_spec tt_cmd_learn = {
    .name = "learn",
    .usage = "tabletalk learn DB \"QUESTION\" \"SQL\" [--knowledge FILE]",
    .about = "Add an example question and the SQL that answers it to the knowledge file\n"
             "(created when absent). The SQL is run read-only first: SQL the guard\n"
             "refuses or that fails is not added. The model sees the three nearest.",
    .groups = tt_learn_groups,
    .footer = "Exit codes: 0 added, 1 SQL error or file not writable, 2 usage or malformed\n"
              "knowledge file, 3 refused by the guard.",
    .args = TT_COMPLETE_FILE,
    .doc =
        "Add an example question and the SQL that answers it to the knowledge file (see "
        "KNOWLEDGE FILE), creating the file when absent. The SQL is run read-only first: SQL the "
        "guard refuses exits 3 and SQL that fails exits 1, and neither is added. The database is "
        "never written; the knowledge file is rewritten whole (a temporary file renamed over "
        "it). With each question the model is shown the three examples nearest it.\n\n"
        "Exit status: 0 added, 1 SQL error or file not writable, 2 usage or malformed knowledge "
        "file, 3 refused by the guard.",
};

static int tt_learn_option(void *ud, int id, const char *arg) {
  if (id == TT_OPT_KNOWLEDGE) *(const char **)ud = arg;
  return 0;
}

/* Writes text to path through a temporary file in the same folder. */
static bool tt_write_replace(const char *path, const char *text) {
  size_t n = strlen(path);
  char *tmp = tt_xcalloc(n + 16, 1);
  snprintf(tmp, n + 16, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    free(tmp);
    return false;
  }
  size_t len = strlen(text), off = 0;
  bool ok = true;
  while (off < len) {
    ssize_t w = write(fd, text + off, len - off);
    if (w <= 0) {
      ok = false;
      break;
    }
    off += (size_t)w;
  }
  ok = ok && fchmod(fd, 0644) == 0 && fsync(fd) == 0;
  ok = close(fd) == 0 && ok;
  ok = ok && rename(tmp, path) == 0;
  if (!ok) unlink(tmp);
  free(tmp);
  return ok;
}

int cmd_learn(int argc, char **argv) {
  const char *given = NULL;
  int rc0 = tt_opts_parse(&tt_cmd_learn, argc, argv, 1, tt_learn_option, &given);
  if (rc0 != TT_OPTS_GO) return rc0;
  if (argc - optind != 3)
    return tt_usage_error("learn", "give a database file, the question and the SQL that answers it");
  const char *db_path = argv[optind], *question = argv[optind + 1], *sql = argv[optind + 2];
  if (!*question) return tt_usage_error("learn", "the question is empty");
  tt_error err;
  tt_db_target target;
  bool server = tt_db_target_parse(db_path, &target, &err) && target.uri;
  tt_db_target_free(&target);
  if (server && !given) /* no file to keep it beside */
    return tt_usage_error("learn", "a database on a server has no file beside it for the "
                                   "knowledge; name one with --knowledge FILE");
  /* the example must run: the database through the session layer */
  tt_config cfg;
  tt_config_init(&cfg);
  cfg.db = db_path;
  tt_service *svc = tt_config_resolve(&cfg, &err) ? tt_service_open(&cfg, 0, &err) : NULL;
  tt_result *r = svc ? tt_db_query(tt_service_db(svc), sql, strlen(sql), &err) : NULL;
  tt_service_free(svc);
  tt_config_free(&cfg);
  if (!svc) return tt_cli_error("learn", &err);
  if (!r) {
    const char *what = err.kind == TT_ERR_REFUSED ? "refused: " : err.kind == TT_ERR_SQL ? "SQL error: " : "";
    int rc = tt_exit_for(err.kind);
    if (err.kind == TT_ERR_REFUSED && err.reason == TT_REFUSE_EMPTY) rc = TT_EXIT_USAGE;
    tt_fail(rc, "%s%s (the example was not added)", what, err.message);
    return rc;
  }
  tt_result_free(r);

  char *beside = given ? NULL : tt_knowledge_path_for(db_path);
  const char *path = given ? given : beside;
  char *dir_copy = tt_xstrdup(path);
  int dfd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY);
  free(dir_copy);
  if (dfd >= 0) flock(dfd, LOCK_EX);
  int rc = TT_EXIT_OK;
  tt_knowledge *k = NULL;
  if (access(path, F_OK) == 0) {
    tt_error ke;
    k = tt_knowledge_load(path, &ke);
    if (!k) {
      char where[32] = "";
      if (ke.line > 0) snprintf(where, sizeof where, ":%d", ke.line);
      rc = tt_fail(TT_EXIT_USAGE, "knowledge file %s%s: %s; fix it first, the example was not added",
                   path, where, ke.message);
    }
  } else {
    k = tt_knowledge_new_empty();
  }
  if (k) {
    tt_knowledge_add_example(k, question, sql);
    char *text = tt_knowledge_dump(k);
    if (!tt_write_replace(path, text))
      rc = tt_fail(TT_EXIT_FAIL, "cannot write %s: %s", path, strerror(errno));
    else
      printf("added to %s\n", path);
    free(text);
    tt_knowledge_free(k);
  }
  if (dfd >= 0) close(dfd);
  free(beside);
  return rc;
}
