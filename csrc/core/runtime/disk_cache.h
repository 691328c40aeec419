/* Tier 2 of the compilation cache (DESIGN §7): serialized executables in a
 * directory, shared by every process of the same plugin build on the host.
 *
 * An entry is the file "<dir>/<16 hex digits>.ttexec", the hex being a hash
 * of the key, the compile options and the plugin identity (tt_pjrt_identity).
 * The file (native byte order) is a 40-byte header
 *     0  magic "TTXCACHE"        8  format version (u32)   12  identity length (u32)
 *    16  key length (u64)       24  payload length (u64)  32  checksum (u64)
 * then the key, the identity text (plugin identity + compile options) and
 * the payload (tt_pjrt_exec_serialize's bytes). The checksum is
 * tt_disk_cache_checksum of the whole file. A reader takes an entry only if
 * every field, the full key and the identity match; anything else (truncated,
 * damaged, foreign, a name collision, an I/O error) is a miss, so the caller
 * compiles and puts the entry again. Writers write a temporary file
 * ".<hex>.ttexec.<pid>.<n>.tmp" in the same directory and rename it over the
 * entry: readers never see a partial file, concurrent writers (threads or
 * processes) all succeed and the last rename wins. Nothing is fsync'ed: an
 * entry damaged by a crash of the machine reads as a miss.
 *
 * The start-up list. A process that runs the same command again asks for the
 * same programs in the same order (a training script's first steps). For
 * each command line (/proc/self/cmdline) and identity the directory keeps
 * "<dir>/<16 hex digits>.ttlist": the names of the first
 * TT_DISK_CACHE_LIST_MAX entries the last such process got or put, in that
 * order (text: "TTLIST1", then one name per line). Open reads it and starts
 * a thread that loads those entries (read, checked as a get checks them,
 * deserialized) while the process starts (imports, model set-up): a get
 * takes the executable it loaded, or waits for the one it is loading,
 * instead of reading the file. An entry the thread could not load is read
 * again by the get, which counts it as it would have. The list is rewritten
 * (temp + rename) as soon as this process's order departs from it. At most
 * half of the memory tier's bound (TORCH_TPU_CACHE_MAX_PROGRAMS) is loaded
 * ahead. A list
 * that does not parse is ignored. TORCH_TPU_CACHE_PREFETCH=0: no thread (the
 * list is still kept). Executables loaded and never asked for are freed at
 * close.
 *
 * Trust. An entry is machine code that a get runs in this process: whoever
 * can write the directory runs code as this user. Open takes a directory
 * only if it belongs to this user and neither its group nor others may
 * write it (the check ssh applies to its files; a symbolic link must be
 * this user's and lead to such a directory), and so too each parent open
 * creates. Directories it creates are mode 0700, files 0600, whatever the
 * umask. A directory that fails the check is neither read nor written:
 * one warning on stderr names it and the reason, and open returns NULL
 * (the memory tier only), as for a directory that cannot be written.
 *
 * The bound. TORCH_TPU_CACHE_MAX_SIZE (bytes, K/M/G/T suffixes as powers
 * of 1024; default 4G; 0: no bound; a value that does not parse: the
 * default, with a warning) bounds the bytes of the directory's entries and
 * lists, not scanned at every put: the first put of a process scans the
 * directory (readdir + fstatat), later puts add their bytes to an estimate,
 * and when it passes the bound the directory is scanned again; if it is
 * over, the least recently used files go (oldest mtime first: a put writes
 * the file, a hit refreshes its time, so the order holds across processes)
 * until it is within 90% of the bound. After a scan the estimate is at
 * least 90% of the bound, so a process scans again after at most a tenth
 * of the bound of its own puts: with several processes writing at once the
 * directory passes the bound by at most about a tenth of it per other
 * writer. Removing a file another process reads is harmless (it keeps its
 * descriptor); one another process removed first is not an error. Only
 * files whose names match the patterns above are removed, and temporary
 * files an hour old (a writer that died).
 *
 * Ownership: tt_disk_cache_open returns an owned object (tt_disk_cache_close);
 * it borrows the client, which must outlive it. Executables from get are
 * owned by the caller; put borrows its executable.
 * Thread rules: thread-safe. A forked child does not use its parent's
 * loading thread (its gets read the files).
 * Every function accepts a NULL cache (disabled): get misses, the others do
 * nothing, uncounted. */
#ifndef TT_DISK_CACHE_H_
#define TT_DISK_CACHE_H_

#include "../pjrt/tt_pjrt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TT_DISK_CACHE_MAGIC "TTXCACHE" /* 8 bytes, no NUL in the file */
#define TT_DISK_CACHE_VERSION 1u
#define TT_DISK_CACHE_HEADER 40u        /* bytes before the key */
#define TT_DISK_CACHE_CHECKSUM_AT 32u   /* offset of the checksum field */
#define TT_DISK_CACHE_LIST_MAX 512      /* entries in a start-up list */

#define TT_DISK_CACHE_MAX_SIZE_DEFAULT ((int64_t)4 << 30) /* TORCH_TPU_CACHE_MAX_SIZE's "4G" */

typedef struct tt_disk_cache tt_disk_cache_t; /* owned by the runtime */

/* dir NULL: TORCH_TPU_CACHE_DIR, else ~/.cache/torch_tpu (created, mode
 * 0700, with its parents). Returns NULL (disabled, no error) when
 * TORCH_TPU_DISK_CACHE=0, when the plugin cannot serialize executables,
 * when the directory cannot be created or written, or when it is not
 * trusted (see above: a warning on stderr). */
tt_disk_cache_t* tt_disk_cache_open(tt_pjrt_t* p, const char* dir);
void tt_disk_cache_close(tt_disk_cache_t* c); /* NULL-safe */

/* key: the in-memory cache key bytes (program signature). A hit sets *out to
 * an owned executable; every other case (see above) sets *out NULL and
 * returns NULL (a miss), counted. */
tt_status_t tt_disk_cache_get(tt_disk_cache_t* c, const void* key, size_t len,
                              tt_pjrt_exec_t** out);
/* Serializes e and writes the entry atomically. Failures are counted
 * (errors) and otherwise ignored: returns NULL. */
tt_status_t tt_disk_cache_put(tt_disk_cache_t* c, const void* key, size_t len,
                              tt_pjrt_exec_t* e);

/* hits + misses = gets; rejected (entries found but refused: damaged,
 * foreign, another key) and errors (I/O, serialization) are among the
 * misses of get; errors also count failed puts; writes = entries put;
 * prefetched: the hits the start-up thread had loaded; evictions: files
 * this process removed for the bound. */
typedef struct {
  int64_t hits, misses, writes, rejected, errors, prefetched, evictions;
} tt_disk_cache_stats_t;
void tt_disk_cache_stats(tt_disk_cache_t* c, tt_disk_cache_stats_t* out); /* zeros for NULL */

/* Waits until the start-up thread has been through its list (for tests and
 * benchmarks; returns at once without one). */
void tt_disk_cache_wait_loaded(tt_disk_cache_t* c);

/* Removes the entries and start-up lists of this cache directory, of any
 * plugin, and stale temporary files: only files whose names match the
 * patterns above.
 * Returns the first removal that failed. */
tt_status_t tt_disk_cache_clear(tt_disk_cache_t* c);

/* The directory (borrowed; NULL for NULL), and the path of the entry for
 * `key` (appended to out): for the doctor and the tests. */
const char* tt_disk_cache_dir(const tt_disk_cache_t* c);
void tt_disk_cache_entry_path(const tt_disk_cache_t* c, const void* key, size_t len,
                              tt_sbuf_t* out);
/* The checksum of a whole entry file of `len` >= TT_DISK_CACHE_HEADER bytes,
 * its checksum field taken as zero. */
uint64_t tt_disk_cache_checksum(const void* file, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* TT_DISK_CACHE_H_ */
