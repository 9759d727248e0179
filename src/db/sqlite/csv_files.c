/* csv_files.c — which files a CSV target reads, opened so that a folder
 * from an untrusted archive or clone cannot make tabletalk read outside it
 * or hang: a file named by the user is opened as given (a symbolic link
 * the user names is the user's choice); in a folder, only regular files
 * inside it are read. A symbolic link in the folder is followed only when
 * it resolves (realpath) to a file inside the folder, so `latest.csv ->
 * 2024.csv` works and `notes.csv -> ../secret.csv` is skipped; named pipes
 * (FIFOs), devices, sockets, folders and links to nothing are skipped.
 * What is skipped is said in a note (on stderr and in `schema`).
 *
 * Nothing is opened before lstat says it is a regular file (or a link
 * resolving inside), every open is O_NOFOLLOW|O_NONBLOCK (a FIFO swapped
 * in never blocks the open, a link swapped in fails it), and fstat on the
 * open descriptor decides: what is read is what was checked. The size
 * fstat gives then is how much is read (the file as of that moment). */
#include "db/sqlite/csv_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TT_OPEN_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

static bool tt_csv_is_data_name(const char *name) {
  return name[0] != '.' && (tt_has_suffix_nocase(name, ".csv") || tt_has_suffix_nocase(name, ".tsv"));
}

/* What a file that is not a regular file is, for a note. */
static const char *tt_csv_kind_of(mode_t m) {
  if (S_ISFIFO(m)) return "a named pipe (FIFO), not a regular file";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device, not a regular file";
  if (S_ISSOCK(m)) return "a socket, not a regular file";
  if (S_ISDIR(m)) return "a folder, not a file";
  return "not a regular file";
}

/* Notes a name that was left out, and why (the name escaped: it comes
 * from the folder and goes to a terminal). */
static void tt_csv_skip(tt_csv_files *f, const char *name, const char *why) {
  tt_buf *b = &f->notes;
  tt_buf_puts(b, b->len ? "; " : "");
  tt_escape_terminal(b, name, strlen(name), NULL);
  tt_buf_printf(b, " (%s)", why);
}

static void tt_csv_add(tt_csv_files *f, const char *path, const char *name, int fd,
                       const struct stat *st) {
  if (f->n == f->cap) f->v = tt_xrealloc(f->v, (f->cap = f->cap ? f->cap * 2 : 8) * sizeof *f->v);
  f->v[f->n++] = (tt_csv_file){.path = tt_xstrdup(path), .name = tt_xstrdup(name), .fd = fd,
                               .st = *st};
}

/* Opens path (checked to be a regular file a moment ago) and keeps it when
 * the descriptor is still a regular file; else notes why not. false with
 * err only for a file that cannot be read (permissions). */
static bool tt_csv_open_checked(tt_csv_files *f, int dirfd, const char *at, const char *path,
                                const char *name, const char *shown, tt_error *err) {
  int fd = dirfd >= 0 ? openat(dirfd, at, TT_OPEN_FLAGS) : open(at, TT_OPEN_FLAGS);
  if (fd < 0) {
    if (errno == ELOOP) {
      tt_csv_skip(f, name, "it became a symbolic link while it was opened");
      return true;
    }
    if (errno == ENXIO || errno == ENODEV) {
      tt_csv_skip(f, name, "not a regular file");
      return true;
    }
    if (errno == ENOENT) return true; /* gone since it was listed */
    tt_db_set_error(err, TT_ERR_IO, "cannot read %s: %s (check the file's permissions)", shown,
                    strerror(errno));
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    tt_csv_skip(f, name, tt_csv_kind_of(st.st_mode));
    close(fd);
    return true;
  }
  tt_csv_add(f, path, name, fd, &st);
  return true;
}

/* One entry of the folder real (open as dirfd). */
static bool tt_csv_entry(tt_csv_files *f, int dirfd, const char *real, const char *folder_shown,
                         const char *name, tt_error *err) {
  struct stat lst;
  if (fstatat(dirfd, name, &lst, AT_SYMLINK_NOFOLLOW) != 0) return true; /* gone */
  char *full = tt_xasprintf("%s/%s", real, name);
  char *shown = tt_xasprintf("%s%s%s", folder_shown,
                             folder_shown[strlen(folder_shown) - 1] == '/' ? "" : "/", name);
  bool ok = true;
  if (S_ISLNK(lst.st_mode)) {
    char *target = realpath(full, NULL);
    size_t rn = strlen(real);
    struct stat tst;
    if (!target || stat(target, &tst) != 0)
      tt_csv_skip(f, name, "a symbolic link to nothing");
    else if (strncmp(target, real, rn) != 0 || (target[rn] != '/' && strcmp(real, "/") != 0))
      tt_csv_skip(f, name, "a symbolic link that leads out of the folder");
    else if (!S_ISREG(tst.st_mode))
      tt_csv_skip(f, name, tt_csv_kind_of(tst.st_mode));
    else /* inside the folder: its resolved path, no link left in it */
      ok = tt_csv_open_checked(f, -1, target, target, name, shown, err);
    free(target);
  } else if (!S_ISREG(lst.st_mode)) {
    tt_csv_skip(f, name, tt_csv_kind_of(lst.st_mode)); /* never opened */
  } else {
    ok = tt_csv_open_checked(f, dirfd, name, full, name, shown, err);
  }
  free(shown);
  free(full);
  return ok;
}

static int tt_cmp_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.csv and *.tsv entries of the folder, sorted by name. */
static bool tt_csv_folder(tt_csv_files *f, const char *path, const char *real, tt_error *err) {
  int dirfd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int listfd = dirfd >= 0 ? dup(dirfd) : -1;
  DIR *d = listfd >= 0 ? fdopendir(listfd) : NULL;
  if (!d) {
    tt_db_set_error(err, TT_ERR_IO, "cannot read the folder %s: %s", path, strerror(errno));
    if (listfd >= 0) close(listfd);
    if (dirfd >= 0) close(dirfd);
    return false;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!tt_csv_is_data_name(e->d_name)) continue;
    if (n == cap) names = tt_xrealloc(names, (cap = cap ? cap * 2 : 8) * sizeof *names);
    names[n++] = tt_xstrdup(e->d_name);
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, tt_cmp_name);
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++) ok = tt_csv_entry(f, dirfd, real, path, names[i], err);
  tt_strv_free(names, n);
  close(dirfd);
  if (ok && f->n == 0) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s is a directory with no .csv or .tsv file in it%s%s; give a SQLite "
                    "database file, a CSV file, or a directory of CSV files",
                    path, f->notes.len ? " that can be read: skipped " : "",
                    f->notes.len ? tt_buf_cstr(&f->notes) : "");
    ok = false;
  }
  return ok;
}

bool tt_csv_files_open(tt_csv_files *f, const char *path, const char *real, tt_error *err) {
  *f = (tt_csv_files){.notes = TT_BUF_INIT};
  struct stat st;
  if (stat(real, &st) != 0) {
    tt_db_set_error(err, TT_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    return false;
  }
  bool ok;
  f->folder = S_ISDIR(st.st_mode);
  if (f->folder) {
    ok = tt_csv_folder(f, path, real, err);
  } else {
    /* a file named by the user, opened as given (real: a link resolved);
     * anything but a regular file is an error, never waited on */
    ok = !S_ISREG(st.st_mode) || tt_csv_open_checked(f, -1, real, real, path, path, err);
    if (ok && f->n == 0) {
      tt_db_set_error(err, TT_ERR_IO,
                      "%s is not a regular file; give a CSV file or a folder of them", path);
      ok = false;
    }
  }
  if (!ok) tt_csv_files_close(f);
  return ok;
}

void tt_csv_files_close(tt_csv_files *f) {
  for (size_t i = 0; i < f->n; i++) {
    if (f->v[i].fd >= 0) close(f->v[i].fd);
    free(f->v[i].path);
    free(f->v[i].name);
  }
  free(f->v);
  tt_buf_free(&f->notes);
  *f = (tt_csv_files){.notes = TT_BUF_INIT};
}

const char *tt_csv_files_notes(tt_csv_files *f) {
  return f->notes.len ? tt_buf_cstr(&f->notes) : NULL;
}
