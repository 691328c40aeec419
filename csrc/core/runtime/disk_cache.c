/* Tier 2 of the compilation cache: serialized executables on disk. The file
 * format and the rules are in disk_cache.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "disk_cache.h"
#include "internal.h" /* tt__cache_limit */

#define TT_DISK_CACHE_MAX_FILE ((int64_t)1 << 34) /* 16 GiB: anything larger is not ours */
#define LIST_MAGIC "TTLIST1\n"
#define LIST_MAGIC_LEN 8

/* An entry of the start-up list, as the loading thread goes through it:
 * WAITING -> LOADING -> LOADED (exec and key set) -> DONE (taken by a get),
 * or straight to DONE (a get came first, or the entry did not load). */
typedef enum { PF_WAITING, PF_LOADING, PF_LOADED, PF_DONE } pf_state_t;
typedef struct {
  uint64_t name;         /* the entry's name (entry_hash) */
  pf_state_t state;
  unsigned char* key;    /* owned while LOADED: the key stored in the entry */
  size_t key_len;
  tt_pjrt_exec_t* exec;  /* owned while LOADED */
} pf_slot_t;

/* Thread rules: the strings and max_bytes are immutable after open;
 * counters are atomic; the estimate of the directory's size is guarded by
 * bound_mu, the start-up list's state (used, departed, slots, stop) by mu. */
struct tt_disk_cache {
  tt_pjrt_t* p;    /* borrowed: the client entries are loaded into */
  char* dir;       /* owned */
  char* ident;     /* owned: plugin identity + compile options, as stored in entries */
  size_t ident_len;
  uint64_t seed;   /* hash of ident: the names of this identity's entries */
  _Atomic int64_t hits, misses, writes, rejected, errors, prefetched, evictions;
  _Atomic uint64_t tmp_serial; /* unique temporary names within the process */

  int64_t max_bytes;        /* TORCH_TPU_CACHE_MAX_SIZE; 0: no bound */
  int64_t est_bytes;        /* our files in the directory as last scanned (at least 90% of
                             * the bound) + what this process put since; -1: not scanned yet */
  pthread_mutex_t bound_mu; /* est_bytes, and one scan at a time in this process */

  char* list_path;  /* owned; NULL: no start-up list (no command line to name it by) */
  uint64_t list_name;
  uint64_t used[TT_DISK_CACHE_LIST_MAX]; /* names this process got or put, first use order */
  int nused;
  bool departed;    /* used is not a prefix of the list read at open: rewrite it */
  uint64_t* old;    /* owned: the list read at open */
  int nold;
  pf_slot_t* slots; /* owned: one per entry of old, while the thread loads them */
  int nslots;
  bool stop;        /* close: the thread stops after the entry it loads */
  bool started;     /* the thread runs (joined at close) */
  pid_t pid;        /* the process that opened the cache: a forked child has no thread */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t loaded; /* a slot left LOADING */
};

static void start_list(tt_disk_cache_t* c);
static bool write_all(int fd, const unsigned char* p, size_t n);

/* ---- names ------------------------------------------------------------------------------- */
static uint64_t entry_hash(const tt_disk_cache_t* c, const void* key, size_t len) {
  return tt_hash_bytes(key, len, c->seed);
}

/* The path of the entry named `name` (entry_hash of its key). */
static void entry_path_named(const tt_disk_cache_t* c, uint64_t name, tt_sbuf_t* out) {
  tt_sbuf_printf(out, "%s/%016llx.ttexec", c->dir, (unsigned long long)name);
}

void tt_disk_cache_entry_path(const tt_disk_cache_t* c, const void* key, size_t len,
                              tt_sbuf_t* out) {
  if (c) entry_path_named(c, entry_hash(c, key, len), out);
}

/* A hit: the file's time says it was used now, for every process's bound. */
static void touch(const char* path) { (void)utimensat(AT_FDCWD, path, NULL, 0); }

/* Opens a new temporary file beside the entries (suffix "ttexec" or
 * "ttlist"); its path goes to tmp. */
static int open_temp(tt_disk_cache_t* c, uint64_t h, const char* suffix, tt_sbuf_t* tmp) {
  unsigned long long n = atomic_fetch_add(&c->tmp_serial, 1);
  tt_sbuf_printf(tmp, "%s/.%016llx.%s.%ld.%llu.tmp", c->dir, (unsigned long long)h, suffix,
                 (long)getpid(), n);
  if (tmp->oom) return -1;
  int fd = open(tmp->data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) (void)fchmod(fd, 0600); /* whatever the umask: read and written by this user only */
  return fd;
}

/* ---- open / close ------------------------------------------------------------------------ */
/* TORCH_TPU_CACHE_MAX_SIZE; a value that does not parse: the default, said once. */
static int64_t max_bytes_from_env(void) {
  int64_t b = tt_env_bytes(TT_ENV_CACHE_MAX_SIZE, TT_DISK_CACHE_MAX_SIZE_DEFAULT);
  if (b >= 0) return b;
  static atomic_flag warned = ATOMIC_FLAG_INIT;
  if (!atomic_flag_test_and_set(&warned))
    fprintf(stderr, "[torch_tpu] TORCH_TPU_CACHE_MAX_SIZE=%s is not a byte count (such as 4G or "
            "500M): the disk cache keeps to the default, 4G\n", tt_env_get(TT_ENV_CACHE_MAX_SIZE));
  return TT_DISK_CACHE_MAX_SIZE_DEFAULT;
}

/* Can we create files there? (access() says yes to root even where it
 * cannot; a real file says what a put would see.) */
static bool can_write(tt_disk_cache_t* c) {
  tt_sbuf_t tmp;
  tt_sbuf_init(&tmp);
  int fd = open_temp(c, 0, "ttexec", &tmp);
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
  tt_sbuf_t id;
  tt_sbuf_init(&id);
  if (!c) goto fail;
  c->p = p;
  c->pid = getpid();
  c->max_bytes = max_bytes_from_env();
  c->est_bytes = -1;
  pthread_mutex_init(&c->mu, NULL);
  pthread_mutex_init(&c->bound_mu, NULL);
  pthread_cond_init(&c->loaded, NULL);
  c->dir = tt__disk_dir_open(dir);
  if (!c->dir) goto fail;

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
  start_list(c);
  return c;
fail:
  tt_sbuf_free(&id);
  tt_disk_cache_close(c);
  return NULL;
}

void tt_disk_cache_close(tt_disk_cache_t* c) {
  if (!c) return;
  if (c->started && getpid() == c->pid) {
    pthread_mutex_lock(&c->mu);
    c->stop = true;
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
  }
  for (int i = 0; i < c->nslots; i++) {
    tt_pjrt_exec_destroy(c->p, c->slots[i].exec); /* loaded, never asked for */
    free(c->slots[i].key);
  }
  free(c->slots);
  free(c->old);
  free(c->list_path);
  pthread_cond_destroy(&c->loaded);
  pthread_mutex_destroy(&c->mu);
  pthread_mutex_destroy(&c->bound_mu);
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
  out->prefetched = atomic_load(&c->prefetched);
  out->evictions = atomic_load(&c->evictions);
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

/* Is the file image an entry of our identity, whole? Sets where its key and
 * payload are. */
static bool entry_parse(const tt_disk_cache_t* c, const unsigned char* f, size_t n,
                        size_t* key_len, size_t* payload_at, size_t* payload_len) {
  header_t h;
  if (n < sizeof(h)) return false;
  memcpy(&h, f, sizeof(h));
  if (memcmp(h.magic, TT_DISK_CACHE_MAGIC, 8) || h.version != TT_DISK_CACHE_VERSION) return false;
  if (h.ident_len != c->ident_len || h.key_len > n || h.payload_len > n) return false;
  if (sizeof(h) + h.key_len + h.ident_len + h.payload_len != n) return false;
  if (tt_disk_cache_checksum(f, n) != h.checksum) return false;
  if (memcmp(f + sizeof(h) + h.key_len, c->ident, c->ident_len)) return false;
  *key_len = h.key_len;
  *payload_at = sizeof(h) + h.key_len + c->ident_len;
  *payload_len = h.payload_len;
  return true;
}

/* Does the file image hold the entry for `key` of our identity? */
static bool entry_valid(const tt_disk_cache_t* c, const unsigned char* f, size_t n, const void* key,
                        size_t len, size_t* payload_at, size_t* payload_len) {
  size_t klen = 0;
  return entry_parse(c, f, n, &klen, payload_at, payload_len) && klen == len &&
         !memcmp(f + sizeof(header_t), key, len);
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

/* ---- the start-up list ------------------------------------------------------------------- */
/* The list file: LIST_MAGIC, then one name (16 hex digits) and '\n' per
 * entry, at most TT_DISK_CACHE_LIST_MAX. Anything else is not a list. */
static void read_list(tt_disk_cache_t* c) {
  unsigned char* f = NULL;
  size_t n = 0;
  if (read_file(c->list_path, &f, &n) != READ_OK) return;
  size_t count = n >= LIST_MAGIC_LEN ? (n - LIST_MAGIC_LEN) / 17 : 0;
  bool ok = n >= LIST_MAGIC_LEN && !memcmp(f, LIST_MAGIC, LIST_MAGIC_LEN) &&
            (n - LIST_MAGIC_LEN) % 17 == 0 && count <= TT_DISK_CACHE_LIST_MAX && count > 0;
  uint64_t* names = ok ? malloc(sizeof(*names) * count) : NULL;
  for (size_t i = 0; names && i < count; i++) {
    const char* line = (const char*)f + LIST_MAGIC_LEN + 17 * i;
    char hex[17];
    memcpy(hex, line, 16);
    hex[16] = 0;
    if (!tt__disk_is_hex16(hex) || line[16] != '\n') {
      free(names);
      names = NULL;
      break;
    }
    names[i] = strtoull(hex, NULL, 16);
  }
  free(f);
  if (!names) return;
  touch(c->list_path); /* used: kept by the bound */
  c->old = names;
  c->nold = (int)count;
}

/* Replaces the list with `used` (temp + rename). Called with mu held. */
static void write_list(tt_disk_cache_t* c) {
  tt_sbuf_t text, tmp;
  tt_sbuf_init(&text);
  tt_sbuf_init(&tmp);
  tt_sbuf_append(&text, LIST_MAGIC);
  for (int i = 0; i < c->nused; i++) tt_sbuf_printf(&text, "%016llx\n", (unsigned long long)c->used[i]);
  int fd = text.oom ? -1 : open_temp(c, c->list_name, "ttlist", &tmp);
  bool ok = fd >= 0 && write_all(fd, (const unsigned char*)text.data, text.len);
  if (fd >= 0 && close(fd) != 0) ok = false;
  if (ok) ok = rename(tmp.data, c->list_path) == 0;
  if (!ok && fd >= 0) unlink(tmp.data);
  tt_sbuf_free(&text);
  tt_sbuf_free(&tmp);
}

/* An entry this process got or put: its first uses make the list. */
static void note_use(tt_disk_cache_t* c, uint64_t name) {
  /* a forked child neither takes the lock (held, maybe, by a thread it does
   * not have) nor writes the parent's list */
  if (!c->list_path || getpid() != c->pid) return;
  pthread_mutex_lock(&c->mu);
  bool seen = c->nused >= TT_DISK_CACHE_LIST_MAX;
  for (int i = 0; i < c->nused && !seen; i++) seen = c->used[i] == name;
  if (!seen) {
    if (c->nused >= c->nold || c->old[c->nused] != name) c->departed = true;
    c->used[c->nused++] = name;
    if (c->departed) write_list(c);
  }
  pthread_mutex_unlock(&c->mu);
}

/* Reads, checks (all a get checks but the key, which is kept) and loads the
 * entry `name`; NULL exec if it is absent, damaged, foreign or refused. */
static void load_listed(tt_disk_cache_t* c, uint64_t name, tt_pjrt_exec_t** exec,
                        unsigned char** key, size_t* key_len) {
  *exec = NULL;
  *key = NULL;
  *key_len = 0;
  tt_sbuf_t path;
  tt_sbuf_init(&path);
  entry_path_named(c, name, &path);
  unsigned char* f = NULL;
  size_t n = 0, klen = 0, at = 0, plen = 0;
  if (!path.oom && read_file(path.data, &f, &n) == READ_OK &&
      entry_parse(c, f, n, &klen, &at, &plen) && (*key = malloc(klen ? klen : 1))) {
    memcpy(*key, f + sizeof(header_t), klen);
    *key_len = klen;
    tt_status_t st = tt_pjrt_exec_deserialize(c->p, f + at, plen, exec);
    tt_status_free(st);
    if (!*exec) {
      free(*key);
      *key = NULL;
    }
  }
  free(f);
  tt_sbuf_free(&path);
}

/* The loading thread: the listed entries, in order, until close stops it. */
static void* prefetch_main(void* arg) {
  tt_disk_cache_t* c = arg;
  /* what is loaded ahead keeps the process within half of the maps' bound
   * (each loaded program holds its JIT-compiled code in maps of its own) */
  long maps_ahead = tt__maps_budget() / 2;
  pthread_mutex_lock(&c->mu);
  for (int i = 0, loads = 0; i < c->nslots && !c->stop; i++) {
    pf_slot_t* s = &c->slots[i];
    if (s->state != PF_WAITING) continue;
    if (loads++ % 8 == 0 && tt__maps_count() > maps_ahead) { /* the rest: read when asked for */
      for (int j = i; j < c->nslots; j++)
        if (c->slots[j].state == PF_WAITING) c->slots[j].state = PF_DONE;
      pthread_cond_broadcast(&c->loaded);
      break;
    }
    s->state = PF_LOADING;
    pthread_mutex_unlock(&c->mu);
    tt_pjrt_exec_t* e = NULL;
    unsigned char* key = NULL;
    size_t klen = 0;
    load_listed(c, s->name, &e, &key, &klen);
    pthread_mutex_lock(&c->mu);
    if (c->stop && e) { /* cleared meanwhile (or closing): not to be served */
      tt_pjrt_exec_destroy(c->p, e);
      free(key);
      e = NULL;
      key = NULL;
    }
    s->exec = e;
    s->key = key;
    s->key_len = klen;
    s->state = e ? PF_LOADED : PF_DONE;
    pthread_cond_broadcast(&c->loaded);
  }
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

/* The executable the thread loaded for `key` (owned by the caller), waiting
 * for it if it is being loaded; NULL if the thread has not got to it (then
 * it never will) or could not load it: the caller reads the file. */
static tt_pjrt_exec_t* take_loaded(tt_disk_cache_t* c, uint64_t name, const void* key, size_t len) {
  if (!c->nslots || getpid() != c->pid) return NULL;
  tt_pjrt_exec_t *e = NULL, *drop = NULL;
  pthread_mutex_lock(&c->mu);
  for (int i = 0; i < c->nslots; i++) {
    pf_slot_t* s = &c->slots[i];
    if (s->name != name || s->state == PF_DONE) continue;
    while (s->state == PF_LOADING) pthread_cond_wait(&c->loaded, &c->mu);
    if (s->state == PF_LOADED) {
      if (s->key_len == len && !memcmp(s->key, key, len)) e = s->exec;
      else drop = s->exec; /* another key of the same name: the get decides */
      free(s->key);
      s->key = NULL;
      s->exec = NULL;
    }
    s->state = PF_DONE;
    break;
  }
  pthread_mutex_unlock(&c->mu);
  tt_pjrt_exec_destroy(c->p, drop);
  return e;
}

/* At open: names the list by the command line and the identity, reads it,
 * and starts the thread on its entries. */
static void start_list(tt_disk_cache_t* c) {
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  unsigned char cmd[16384];
  ssize_t n = read(fd, cmd, sizeof(cmd));
  close(fd);
  if (n <= 0) return;
  c->list_name = tt_hash_bytes(cmd, (size_t)n, c->seed ^ 0x6c697374ull);
  tt_sbuf_t path;
  tt_sbuf_init(&path);
  tt_sbuf_printf(&path, "%s/%016llx.ttlist", c->dir, (unsigned long long)c->list_name);
  if (path.oom) {
    tt_sbuf_free(&path);
    return;
  }
  c->list_path = path.data;
  read_list(c);
  if (!c->nold || !tt_env_flag(TT_ENV_CACHE_PREFETCH)) return;
  /* what is loaded ahead stays within half of the memory tier's bound (the
   * memory maps a loaded program holds) */
  int ahead = c->nold;
  size_t half = tt__cache_limit() / 2;
  if ((size_t)ahead > half) ahead = (int)half;
  c->slots = calloc((size_t)ahead, sizeof(*c->slots));
  if (!c->slots) return;
  for (int i = 0; i < ahead; i++) c->slots[i].name = c->old[i];
  c->nslots = ahead;
  c->started = pthread_create(&c->thread, NULL, prefetch_main, c) == 0;
  if (!c->started) c->nslots = 0; /* no thread: every get reads its file */
}

void tt_disk_cache_wait_loaded(tt_disk_cache_t* c) {
  if (!c || !c->started || getpid() != c->pid) return;
  pthread_mutex_lock(&c->mu);
  for (;;) {
    bool busy = false;
    for (int i = 0; i < c->nslots && !busy; i++)
      busy = c->slots[i].state == PF_WAITING || c->slots[i].state == PF_LOADING;
    if (!busy) break;
    pthread_cond_wait(&c->loaded, &c->mu);
  }
  pthread_mutex_unlock(&c->mu);
}

/* ---- the bound (TORCH_TPU_CACHE_MAX_SIZE) -------------------------------------------------- */
/* Trims the directory to the bound (disk_files.c), counts what it
 * removed, and sets the estimate to what is left, at least 90% of the
 * bound: this process scans again after at most a tenth of the bound of
 * its own puts, so what other processes put meanwhile is seen soon.
 * Called with bound_mu held. */
static void enforce_bound(tt_disk_cache_t* c) {
  int64_t evicted = 0;
  int64_t total = tt__disk_dir_trim(c->dir, c->max_bytes, &evicted);
  int64_t target = c->max_bytes - c->max_bytes / 10;
  atomic_fetch_add(&c->evictions, evicted);
  if (total >= 0) c->est_bytes = total > target ? total : target; /* else: the next put scans again */
}

/* After a put of `bytes`: the estimate grows (the first put scans, this
 * put included); past the bound, enforce_bound. A forked child leaves it
 * to its parent (the lock may be held by a thread it does not have). */
static void account_put(tt_disk_cache_t* c, int64_t bytes) {
  if (!c->max_bytes || getpid() != c->pid) return;
  pthread_mutex_lock(&c->bound_mu);
  if (c->est_bytes < 0) enforce_bound(c);
  else if ((c->est_bytes += bytes) > c->max_bytes) enforce_bound(c);
  pthread_mutex_unlock(&c->bound_mu);
}

/* ---- get / put --------------------------------------------------------------------------- */
tt_status_t tt_disk_cache_get(tt_disk_cache_t* c, const void* key, size_t len,
                              tt_pjrt_exec_t** out) {
  *out = NULL;
  if (!c) return NULL;
  uint64_t name = entry_hash(c, key, len);
  tt_sbuf_t path;
  tt_sbuf_init(&path);
  entry_path_named(c, name, &path);
  *out = take_loaded(c, name, key, len);
  if (*out) {
    atomic_fetch_add(&c->hits, 1);
    atomic_fetch_add(&c->prefetched, 1);
    if (!path.oom) touch(path.data);
    tt_sbuf_free(&path);
    note_use(c, name);
    return NULL;
  }
  unsigned char* f = NULL;
  size_t n = 0, at = 0, plen = 0;
  read_result_t r = path.oom ? READ_ERROR : read_file(path.data, &f, &n);
  if (r == READ_OK && !entry_valid(c, f, n, key, len, &at, &plen)) r = READ_BAD;
  if (r == READ_OK) {
    tt_status_t st = tt_pjrt_exec_deserialize(c->p, f + at, plen, out);
    if (st) r = READ_BAD; /* checksummed, our identity, and still refused */
    tt_status_free(st);
  }
  free(f);
  if (r == READ_OK) touch(path.data);
  tt_sbuf_free(&path);
  if (r == READ_OK) {
    atomic_fetch_add(&c->hits, 1);
    note_use(c, name);
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
  entry_path_named(c, hash, &path);
  int fd = ok ? open_temp(c, hash, "ttexec", &tmp) : -1;
  ok = fd >= 0 && !path.oom;
  if (ok) ok = write_all(fd, f, n);
  if (fd >= 0 && close(fd) != 0) ok = false;
  if (ok) ok = rename(tmp.data, path.data) == 0;
  if (!ok && fd >= 0) unlink(tmp.data);
  tt_sbuf_free(&tmp);
  tt_sbuf_free(&path);
  free(f);
  atomic_fetch_add(ok ? &c->writes : &c->errors, 1);
  if (ok) note_use(c, hash);
  if (ok) account_put(c, (int64_t)n);
  return NULL;
}

/* ---- clear ------------------------------------------------------------------------------- */
/* Nothing loaded at start-up is served after a clear. */
static void drop_loaded(tt_disk_cache_t* c) {
  if (getpid() != c->pid) return; /* a forked child never takes them */
  pthread_mutex_lock(&c->mu);
  c->stop = true;
  c->departed = true; /* the list file is gone: the next use writes it again */
  for (int i = 0; i < c->nslots; i++) {
    pf_slot_t* s = &c->slots[i];
    if (s->state == PF_LOADING) continue; /* the thread drops it (stop) */
    tt_pjrt_exec_destroy(c->p, s->exec);
    free(s->key);
    s->exec = NULL;
    s->key = NULL;
    s->state = PF_DONE;
  }
  pthread_mutex_unlock(&c->mu);
}

tt_status_t tt_disk_cache_clear(tt_disk_cache_t* c) {
  if (!c) return NULL;
  drop_loaded(c);
  if (getpid() == c->pid) { /* the next put scans the emptied directory */
    pthread_mutex_lock(&c->bound_mu);
    c->est_bytes = -1;
    pthread_mutex_unlock(&c->bound_mu);
  }
  DIR* d = opendir(c->dir);
  if (!d) return tt_status_make(TT_UNAVAILABLE, "cannot list %s: %s", c->dir, strerror(errno));
  tt_status_t st = NULL;
  tt_sbuf_t path;
  tt_sbuf_init(&path);
  for (struct dirent* ent; (ent = readdir(d));) {
    if (!tt__disk_is_entry(ent->d_name) && !tt__disk_is_temp(ent->d_name)) continue;
    tt_sbuf_clear(&path);
    tt_sbuf_printf(&path, "%s/%s", c->dir, ent->d_name);
    if (!path.oom && unlink(path.data) != 0 && errno != ENOENT && !st)
      st = tt_status_make(TT_UNAVAILABLE, "cannot remove %s: %s", path.data, strerror(errno));
  }
  tt_sbuf_free(&path);
  closedir(d);
  return st;
}
