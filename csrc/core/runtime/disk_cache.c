/* Tier 2 of the compilation cache: serialized executables on disk. The file
 * format and the rules are in disk_cache.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "disk_cache.h"

#define TT_DISK_CACHE_MAX_FILE ((int64_t)1 << 34) /* 16 GiB: anything larger is not ours */

/* Thread rules: the strings are immutable after open; counters are atomic. */
struct tt_disk_cache {
  tt_pjrt_t* p;    /* borrowed: the client entries are loaded into */
  char* dir;       /* owned */
  char* ident;     /* owned: plugin identity + compile options, as stored in entries */
  size_t ident_len;
  uint64_t seed;   /* hash of ident: the names of this identity's entries */
  _Atomic int64_t hits, misses, writes, rejected, errors;
  _Atomic uint64_t tmp_serial; /* unique temporary names within the process */
};

/* ---- names ------------------------------------------------------------------------------- */
static uint64_t entry_hash(const tt_disk_cache_t* c, const void* key, size_t len) {
  return tt_hash_bytes(key, len, c->seed);
}

void tt_disk_cache_entry_path(const tt_disk_cache_t* c, const void* key, size_t len,
                              tt_sbuf_t* out) {
  if (c)
    tt_sbuf_printf(out, "%s/%016llx.ttexec", c->dir, (unsigned long long)entry_hash(c, key, len));
}

static bool is_hex16(const char* s) {
  for (int i = 0; i < 16; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
  return true;
}
/* "<hex>.ttexec" or ".<hex>.ttexec.<pid>.<n>.tmp" */
static bool is_our_file(const char* name) {
  size_t n = strlen(name);
  if (n == 23 && is_hex16(name) && !strcmp(name + 16, ".ttexec")) return true;
  return n > 29 && name[0] == '.' && is_hex16(name + 1) && !strncmp(name + 17, ".ttexec.", 8) &&
         !strcmp(name + n - 4, ".tmp");
}

/* Opens a new temporary file beside the entries; its path goes to tmp. */
static int open_temp(tt_disk_cache_t* c, uint64_t h, tt_sbuf_t* tmp) {
  unsigned long long n = atomic_fetch_add(&c->tmp_serial, 1);
  tt_sbuf_printf(tmp, "%s/.%016llx.ttexec.%ld.%llu.tmp", c->dir, (unsigned long long)h,
                 (long)getpid(), n);
  if (tmp->oom) return -1;
  return open(tmp->data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
}

/* ---- open / close ------------------------------------------------------------------------ */
/* mkdir -p, mode 0700 for what it creates; true if `path` is a directory. */
static bool make_dirs(char* path) {
  for (char* s = path + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    int r = mkdir(path, 0700);
    *s = '/';
    if (r != 0 && errno != EEXIST) return false;
  }
  if (mkdir(path, 0700) != 0 && errno != EEXIST) return false;
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Can we create files there? (access() says yes to root even where it
 * cannot; a real file says what a put would see.) */
static bool can_write(tt_disk_cache_t* c) {
  tt_sbuf_t tmp;
  tt_sbuf_init(&tmp);
  int fd = open_temp(c, 0, &tmp);
  if (fd >= 0) {
    close(fd);
    unlink(tmp.data);
  }
  tt_sbuf_free(&tmp);
  return fd >= 0;
}

tt_disk_cache_t* tt_disk_cache_open(tt_pjrt_t* p, const char* dir) {
  if (!p || !tt_env_flag(TT_ENV_DISK_CACHE) || !tt_pjrt_can_serialize(p)) return NULL;
  tt_disk_cache_t* c = calloc(1, sizeof(*c));
  tt_sbuf_t d, id;
  tt_sbuf_init(&d);
  tt_sbuf_init(&id);
  if (!c) goto fail;
  c->p = p;
  if (!dir || !*dir) dir = tt_env_get(TT_ENV_CACHE_DIR);
  if (dir && *dir) {
    tt_sbuf_append(&d, dir);
  } else {
    const char* home = getenv("HOME");
    if (!home || !*home) goto fail;
    tt_sbuf_printf(&d, "%s/.cache/torch_tpu", home);
  }
  while (!d.oom && d.len > 1 && d.data[d.len - 1] == '/') d.data[--d.len] = 0;
  if (d.oom || !make_dirs(d.data)) goto fail;
  c->dir = d.data;
  d.data = NULL;

  char buf[PATH_MAX + 1024];
  tt_status_t st = tt_pjrt_identity(p, buf, sizeof(buf));
  if (st) {
    tt_status_free(st);
    goto fail;
  }
  size_t olen = 0;
  const unsigned char* opts = tt_pjrt_compile_options(&olen);
  tt_sbuf_printf(&id, "%s options=", buf);
  for (size_t i = 0; i < olen; i++) tt_sbuf_printf(&id, "%02x", opts[i]);
  /* XLA reads its debug options from XLA_FLAGS (the plugin's compiler too:
   * fast math, thread use, code generation): they are compile options */
  const char* xla_flags = getenv("XLA_FLAGS");
  tt_sbuf_printf(&id, " xla_flags=%s", xla_flags ? xla_flags : "");
  if (id.oom) goto fail;
  c->ident = id.data;
  c->ident_len = id.len;
  id.data = NULL;
  c->seed = tt_hash_bytes(c->ident, c->ident_len, 0x74745f6469736bull);
  if (!can_write(c)) goto fail;
  return c;
fail:
  tt_sbuf_free(&d);
  tt_sbuf_free(&id);
  tt_disk_cache_close(c);
  return NULL;
}

void tt_disk_cache_close(tt_disk_cache_t* c) {
  if (!c) return;
  free(c->dir);
  free(c->ident);
  free(c);
}

const char* tt_disk_cache_dir(const tt_disk_cache_t* c) { return c ? c->dir : NULL; }

void tt_disk_cache_stats(tt_disk_cache_t* c, tt_disk_cache_stats_t* out) {
  memset(out, 0, sizeof(*out));
  if (!c) return;
  out->hits = atomic_load(&c->hits);
  out->misses = atomic_load(&c->misses);
  out->writes = atomic_load(&c->writes);
  out->rejected = atomic_load(&c->rejected);
  out->errors = atomic_load(&c->errors);
}

/* ---- the file format --------------------------------------------------------------------- */
uint64_t tt_disk_cache_checksum(const void* file, size_t len) {
  unsigned char head[TT_DISK_CACHE_HEADER];
  memcpy(head, file, sizeof(head));
  memset(head + TT_DISK_CACHE_CHECKSUM_AT, 0, 8);
  uint64_t h = tt_hash_bytes(head, sizeof(head), 0x74745f63686bull);
  return tt_hash_bytes((const unsigned char*)file + sizeof(head), len - sizeof(head), h);
}

typedef struct header {
  char magic[8];
  uint32_t version;
  uint32_t ident_len;
  uint64_t key_len;
  uint64_t payload_len;
  uint64_t checksum;
} header_t;
_Static_assert(sizeof(header_t) == TT_DISK_CACHE_HEADER, "entry header");
_Static_assert(offsetof(header_t, checksum) == TT_DISK_CACHE_CHECKSUM_AT, "checksum offset");

/* Does the file image hold the entry for `key` of our identity? Sets the
 * payload's place. */
static bool entry_valid(const tt_disk_cache_t* c, const unsigned char* f, size_t n, const void* key,
                        size_t len, size_t* payload_at, size_t* payload_len) {
  header_t h;
  if (n < sizeof(h)) return false;
  memcpy(&h, f, sizeof(h));
  if (memcmp(h.magic, TT_DISK_CACHE_MAGIC, 8) || h.version != TT_DISK_CACHE_VERSION) return false;
  if (h.key_len != len || h.ident_len != c->ident_len || h.payload_len > n) return false;
  if (sizeof(h) + h.key_len + h.ident_len + h.payload_len != n) return false;
  if (tt_disk_cache_checksum(f, n) != h.checksum) return false;
  if (memcmp(f + sizeof(h), key, len) || memcmp(f + sizeof(h) + len, c->ident, c->ident_len))
    return false;
  *payload_at = sizeof(h) + len + c->ident_len;
  *payload_len = h.payload_len;
  return true;
}

typedef enum { READ_OK, READ_ABSENT, READ_BAD, READ_ERROR } read_result_t;

static read_result_t read_file(const char* path, unsigned char** data, size_t* n) {
  *data = NULL;
  *n = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? READ_ABSENT : READ_ERROR;
  struct stat sb;
  read_result_t r = READ_OK;
  unsigned char* buf = NULL;
  size_t got = 0;
  if (fstat(fd, &sb) != 0) r = READ_ERROR;
  else if (!S_ISREG(sb.st_mode) || sb.st_size > TT_DISK_CACHE_MAX_FILE) r = READ_BAD;
  else if (!(buf = malloc((size_t)sb.st_size + 1))) r = READ_ERROR;
  while (r == READ_OK && got < (size_t)sb.st_size) {
    ssize_t k = read(fd, buf + got, (size_t)sb.st_size - got);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) r = READ_ERROR;
    else if (k == 0) r = READ_BAD; /* shrank under us: not an entry of ours */
    else got += (size_t)k;
  }
  close(fd);
  if (r != READ_OK) {
    free(buf);
    return r;
  }
  *data = buf;
  *n = got;
  return READ_OK;
}

/* ---- get / put --------------------------------------------------------------------------- */
tt_status_t tt_disk_cache_get(tt_disk_cache_t* c, const void* key, size_t len,
                              tt_pjrt_exec_t** out) {
  *out = NULL;
  if (!c) return NULL;
  tt_sbuf_t path;
  tt_sbuf_init(&path);
  tt_disk_cache_entry_path(c, key, len, &path);
  unsigned char* f = NULL;
  size_t n = 0, at = 0, plen = 0;
  read_result_t r = path.oom ? READ_ERROR : read_file(path.data, &f, &n);
  tt_sbuf_free(&path);
  if (r == READ_OK && !entry_valid(c, f, n, key, len, &at, &plen)) r = READ_BAD;
  if (r == READ_OK) {
    tt_status_t st = tt_pjrt_exec_deserialize(c->p, f + at, plen, out);
    if (st) r = READ_BAD; /* checksummed, our identity, and still refused */
    tt_status_free(st);
  }
  free(f);
  if (r == READ_OK) {
    atomic_fetch_add(&c->hits, 1);
    return NULL;
  }
  atomic_fetch_add(&c->misses, 1);
  if (r == READ_BAD) atomic_fetch_add(&c->rejected, 1);
  if (r == READ_ERROR) atomic_fetch_add(&c->errors, 1);
  return NULL;
}

static bool write_all(int fd, const unsigned char* p, size_t n) {
  while (n) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= (size_t)k;
  }
  return true;
}

tt_status_t tt_disk_cache_put(tt_disk_cache_t* c, const void* key, size_t len,
                              tt_pjrt_exec_t* e) {
  if (!c) return NULL;
  void* payload = NULL;
  size_t plen = 0;
  tt_status_t st = tt_pjrt_exec_serialize(c->p, e, &payload, &plen);
  if (st) {
    tt_status_free(st);
    atomic_fetch_add(&c->errors, 1);
    return NULL;
  }
  size_t n = sizeof(header_t) + len + c->ident_len + plen;
  unsigned char* f = malloc(n);
  bool ok = f != NULL;
  if (ok) {
    header_t h = {.version = TT_DISK_CACHE_VERSION, .ident_len = (uint32_t)c->ident_len,
                  .key_len = len, .payload_len = plen};
    memcpy(h.magic, TT_DISK_CACHE_MAGIC, 8);
    memcpy(f, &h, sizeof(h));
    memcpy(f + sizeof(h), key, len);
    memcpy(f + sizeof(h) + len, c->ident, c->ident_len);
    memcpy(f + sizeof(h) + len + c->ident_len, payload, plen);
    h.checksum = tt_disk_cache_checksum(f, n);
    memcpy(f, &h, sizeof(h));
  }
  free(payload);
  uint64_t hash = entry_hash(c, key, len);
  tt_sbuf_t tmp, path;
  tt_sbuf_init(&tmp);
  tt_sbuf_init(&path);
  tt_disk_cache_entry_path(c, key, len, &path);
  int fd = ok ? open_temp(c, hash, &tmp) : -1;
  ok = fd >= 0 && !path.oom;
  if (ok) ok = write_all(fd, f, n);
  if (fd >= 0 && close(fd) != 0) ok = false;
  if (ok) ok = rename(tmp.data, path.data) == 0;
  if (!ok && fd >= 0) unlink(tmp.data);
  tt_sbuf_free(&tmp);
  tt_sbuf_free(&path);
  free(f);
  atomic_fetch_add(ok ? &c->writes : &c->errors, 1);
  return NULL;
}

/* ---- clear ------------------------------------------------------------------------------- */
tt_status_t tt_disk_cache_clear(tt_disk_cache_t* c) {
  if (!c) return NULL;
  DIR* d = opendir(c->dir);
  if (!d) return tt_status_make(TT_UNAVAILABLE, "cannot list %s: %s", c->dir, strerror(errno));
  tt_status_t st = NULL;
  tt_sbuf_t path;
  tt_sbuf_init(&path);
  for (struct dirent* ent; (ent = readdir(d));) {
    if (!is_our_file(ent->d_name)) continue;
    tt_sbuf_clear(&path);
    tt_sbuf_printf(&path, "%s/%s", c->dir, ent->d_name);
    if (!path.oom && unlink(path.data) != 0 && errno != ENOENT && !st)
      st = tt_status_make(TT_UNAVAILABLE, "cannot remove %s: %s", path.data, strerror(errno));
  }
  tt_sbuf_free(&path);
  closedir(d);
  return st;
}
