/* The disk cache's directory and its files (disk_cache.h: names, trust,
 * the bound): which names are the cache's, opening a directory that may
 * hold code this process runs, and trimming it to TORCH_TPU_CACHE_MAX_SIZE.
 * Functions of paths only; thread-compatible (the caller serializes trims
 * of one directory within a process; processes need no lock). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define TEMP_STALE_SECONDS 3600 /* a temporary file this old was left by a writer that died */

/* ---- names ------------------------------------------------------------------------------- */
bool tt__disk_is_hex16(const char* s) {
  for (int i = 0; i < 16; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
  return true;
}
static bool is_our_suffix(const char* s, char end) {
  return (!strncmp(s, ".ttexec", 7) || !strncmp(s, ".ttlist", 7)) && s[7] == end;
}
bool tt__disk_is_entry(const char* name) {
  return strlen(name) == 23 && tt__disk_is_hex16(name) && is_our_suffix(name + 16, 0);
}
bool tt__disk_is_temp(const char* name) {
  size_t n = strlen(name);
  return n > 29 && name[0] == '.' && tt__disk_is_hex16(name + 1) && is_our_suffix(name + 17, '.') &&
         !strcmp(name + n - 4, ".tmp");
}

/* ---- open: create, then trust ------------------------------------------------------------ */
/* One mkdir of mkdir -p: mode 0700 whatever the umask. Sets *created to the
 * length of `path` if it made the first directory so far. */
static bool make_dir(char* path, size_t len, size_t* created) {
  if (mkdir(path, 0700) != 0) return errno == EEXIST;
  (void)chmod(path, 0700);
  if (*created == SIZE_MAX) *created = len;
  return true;
}

/* mkdir -p; true if `path` is a directory. *created: the length of the
 * first directory it made (its parents were there), or SIZE_MAX. */
static bool make_dirs(char* path, size_t* created) {
  *created = SIZE_MAX;
  for (char* s = path + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    bool ok = make_dir(path, (size_t)(s - path), created);
    *s = '/';
    if (!ok) return false;
  }
  if (!make_dir(path, strlen(path), created)) return false;
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Whoever can write the directory chooses what a get loads: a directory
 * is trusted if it is this user's and no one else may write it (what ssh
 * asks of its files). A symbolic link must be this user's and lead to such
 * a directory. False with the reason appended to why. */
static bool dir_trusted(const char* path, tt_sbuf_t* why) {
  struct stat sb;
  const char* is = "is";
  if (lstat(path, &sb) != 0) {
    tt_sbuf_printf(why, "cannot stat %s: %s", path, strerror(errno));
    return false;
  }
  if (S_ISLNK(sb.st_mode)) {
    is = "leads to a directory";
    if (sb.st_uid != geteuid()) is = "is a symbolic link";
    else if (stat(path, &sb) != 0) {
      tt_sbuf_printf(why, "cannot stat %s: %s", path, strerror(errno));
      return false;
    }
  }
  unsigned mode = (unsigned)sb.st_mode & 07777;
  if (sb.st_uid != geteuid())
    tt_sbuf_printf(why, "%s %s owned by uid %ld, not by this user (uid %ld)", path, is,
                   (long)sb.st_uid, (long)geteuid());
  else if (!S_ISDIR(sb.st_mode)) tt_sbuf_printf(why, "%s is not a directory", path);
  else if (mode & S_IWOTH) tt_sbuf_printf(why, "%s %s writable by other users (mode %04o)", path, is, mode);
  else if (mode & S_IWGRP) tt_sbuf_printf(why, "%s %s writable by its group (mode %04o)", path, is, mode);
  else return true;
  return false;
}

/* The directory, and those of its parents that open created (from the
 * prefix of `created` bytes on): each must be trusted. */
static bool dirs_trusted(char* path, size_t created, tt_sbuf_t* why) {
  for (char* s = path + (created < strlen(path) ? created : strlen(path)); *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    bool ok = dir_trusted(path, why);
    *s = '/';
    if (!ok) return false;
  }
  return dir_trusted(path, why);
}

char* tt__disk_dir_open(const char* dir) {
  tt_sbuf_t d, why;
  tt_sbuf_init(&d);
  tt_sbuf_init(&why);
  if (!dir || !*dir) dir = tt_env_get(TT_ENV_CACHE_DIR);
  if (dir && *dir) {
    tt_sbuf_append(&d, dir);
  } else {
    const char* home = getenv("HOME");
    if (!home || !*home) return NULL;
    tt_sbuf_printf(&d, "%s/.cache/torch_tpu", home);
  }
  while (!d.oom && d.len > 1 && d.data[d.len - 1] == '/') d.data[--d.len] = 0;
  size_t created = SIZE_MAX;
  bool ok = !d.oom && make_dirs(d.data, &created);
  if (ok && !dirs_trusted(d.data, created, &why)) {
    fprintf(stderr, "[torch_tpu] compilation cache disabled: %s; using the memory cache only\n",
            why.oom ? d.data : why.data);
    ok = false;
  }
  tt_sbuf_free(&why);
  if (!ok) tt_sbuf_free(&d);
  return d.data; /* NULL after tt_sbuf_free */
}

/* ---- the bound --------------------------------------------------------------------------- */
/* A file of ours in the directory: an entry or a start-up list. */
typedef struct {
  char name[24];
  struct timespec used; /* mtime: written, or last hit (touch) */
  int64_t size;
} dir_file_t;

/* Appends a file to the growing array *files (owned by the caller). */
static bool push_file(dir_file_t** files, size_t* n, size_t* cap, const char* name,
                      const struct stat* sb) {
  if (*n == *cap) {
    size_t cap2 = *cap ? 2 * *cap : 256;
    dir_file_t* f = realloc(*files, cap2 * sizeof(*f));
    if (!f) return false;
    *files = f;
    *cap = cap2;
  }
  dir_file_t* f = &(*files)[(*n)++];
  memcpy(f->name, name, sizeof(f->name)); /* an entry's or list's name: 23 characters and NUL */
  f->used = sb->st_mtim;
  f->size = (int64_t)sb->st_size;
  return true;
}

/* The bytes of our entries and lists in the directory (regular files
 * only), listed in *files if files is not NULL (owned by the caller; NULL
 * on failure); removes temporary files a dead writer left. -1: the
 * directory cannot be listed, or no memory for the list. */
static int64_t scan_dir(const char* dir, dir_file_t** files, size_t* n) {
  size_t cap = 0;
  if (files) {
    *files = NULL;
    *n = 0;
  }
  DIR* d = opendir(dir);
  if (!d) return -1;
  int64_t total = 0;
  time_t stale = time(NULL) - TEMP_STALE_SECONDS;
  for (struct dirent* ent; total >= 0 && (ent = readdir(d));) {
    struct stat sb;
    if (!(tt__disk_is_entry(ent->d_name) || tt__disk_is_temp(ent->d_name)) || fstatat(dirfd(d), ent->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(sb.st_mode))
      continue; /* not ours, or removed meanwhile */
    if (tt__disk_is_temp(ent->d_name)) {
      if (sb.st_mtime < stale) (void)unlinkat(dirfd(d), ent->d_name, 0);
      continue;
    }
    total += (int64_t)sb.st_size;
    if (files && !push_file(files, n, &cap, ent->d_name, &sb)) total = -1;
  }
  closedir(d);
  if (total < 0 && files) {
    free(*files);
    *files = NULL;
  }
  return total;
}

static int older_first(const void* a, const void* b) {
  const struct timespec *x = &((const dir_file_t*)a)->used, *y = &((const dir_file_t*)b)->used;
  if (x->tv_sec != y->tv_sec) return x->tv_sec < y->tv_sec ? -1 : 1;
  if (x->tv_nsec != y->tv_nsec) return x->tv_nsec < y->tv_nsec ? -1 : 1;
  return strcmp(((const dir_file_t*)a)->name, ((const dir_file_t*)b)->name);
}

int64_t tt__disk_dir_trim(const char* dir, int64_t max_bytes, int64_t* evicted) {
  dir_file_t* files = NULL;
  size_t n = 0;
  int64_t total = scan_dir(dir, &files, &n);
  if (total > max_bytes) {
    int64_t target = max_bytes - max_bytes / 10;
    qsort(files, n, sizeof(*files), older_first);
    tt_sbuf_t path;
    tt_sbuf_init(&path);
    for (size_t i = 0; i < n && total > target; i++) {
      tt_sbuf_clear(&path);
      tt_sbuf_printf(&path, "%s/%s", dir, files[i].name);
      if (path.oom) break;
      if (unlink(path.data) == 0) (*evicted)++;
      else if (errno != ENOENT) continue; /* still there */
      total -= files[i].size; /* ours, or removed by another process first */
    }
    tt_sbuf_free(&path);
  }
  free(files);
  return total;
}
