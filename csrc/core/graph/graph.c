/* Deferred op calls: deep copies in a bump arena, structural hashes, the
 * repeated-block detector. */
#include <stdlib.h>
#include <string.h>

#include "tt_graph.h"

#define ARENA_BLOCK (256u * 1024u)

typedef struct block {
  struct block* next;
  size_t cap, used;
  _Alignas(16) unsigned char data[];
} block_t;

typedef struct node {
  tt_call_t call; /* every pointer in it points into the arena */
  uint64_t hash;
} node_t;

struct tt_graph {
  block_t* head;    /* blocks in use, newest first */
  block_t* spare;   /* blocks kept by the last reset */
  node_t* nodes;    /* owned */
  int n, cap;
};

tt_graph_t* tt_graph_create(void) { return calloc(1, sizeof(tt_graph_t)); }

static void free_blocks(block_t* b) {
  while (b) {
    block_t* next = b->next;
    free(b);
    b = next;
  }
}

void tt_graph_destroy(tt_graph_t* g) {
  if (!g) return;
  free_blocks(g->head);
  free_blocks(g->spare);
  free(g->nodes);
  free(g);
}

static void* arena_alloc(tt_graph_t* g, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (!g->head || g->head->used + n > g->head->cap) {
    block_t* b = NULL;
    if (g->spare && n <= g->spare->cap) {
      b = g->spare;
      g->spare = b->next;
    } else {
      size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
      b = malloc(sizeof(block_t) + cap);
      if (!b) return NULL;
      b->cap = cap;
    }
    b->used = 0;
    b->next = g->head;
    g->head = b;
  }
  void* p = g->head->data + g->head->used;
  g->head->used += n;
  return p;
}

static void* arena_copy(tt_graph_t* g, const void* src, size_t n, bool* oom) {
  if (!src || !n) return NULL;
  void* p = arena_alloc(g, n);
  if (!p) {
    *oom = true;
    return NULL;
  }
  memcpy(p, src, n);
  return p;
}

static void copy_arg(tt_graph_t* g, tt_call_arg_t* a, bool* oom) {
  if ((a->kind == TT_ARG_TENSORS || a->kind == TT_ARG_SCALARS) && a->n > 0) {
    tt_call_arg_t* l = arena_copy(g, a->list, sizeof(tt_call_arg_t) * (size_t)a->n, oom);
    if (l)
      for (int i = 0; i < a->n; i++) copy_arg(g, &l[i], oom);
    a->list = l;
  } else if (a->kind == TT_ARG_INTS) {
    a->ints = arena_copy(g, a->ints, sizeof(int64_t) * (size_t)a->n, oom);
  } else if (a->kind == TT_ARG_STR && a->str) {
    a->str = arena_copy(g, a->str, strlen(a->str) + 1, oom);
  }
}

/* ---- structural hash ------------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

static uint64_t hash_view(uint64_t h, const tt_view_t* v) {
  h = mix(h, (uint64_t)v->dtype);
  h = mix(h, (uint64_t)v->rank);
  for (int i = 0; i < v->rank && i < TT_MAX_RANK; i++) {
    h = mix(h, (uint64_t)v->sizes[i]);
    h = mix(h, (uint64_t)v->strides[i]);
  }
  return mix(h, (uint64_t)(v->conj | (v->neg << 1)));
}

static uint64_t hash_arg(uint64_t h, const tt_call_arg_t* a) {
  h = mix(h, (uint64_t)a->kind);
  switch (a->kind) {
    case TT_ARG_TENSOR:
      h = mix(h, (uint64_t)a->tier);
      return a->on_host ? mix(h, (uint64_t)a->sdtype) : hash_view(h, &a->view);
    case TT_ARG_SCALAR:
      return mix(h, (uint64_t)a->sdtype);
    case TT_ARG_TENSORS:
    case TT_ARG_SCALARS:
      h = mix(h, (uint64_t)a->n);
      for (int i = 0; i < a->n; i++) h = hash_arg(h, &a->list[i]);
      return h;
    case TT_ARG_INT:
    case TT_ARG_BOOL:
      return mix(h, (uint64_t)a->i);
    case TT_ARG_FLOAT: {
      uint64_t bits;
      memcpy(&bits, &a->f, sizeof bits);
      return mix(h, bits);
    }
    case TT_ARG_INTS:
      h = mix(h, (uint64_t)a->n);
      for (int i = 0; i < a->n; i++) h = mix(h, (uint64_t)a->ints[i]);
      return h;
    case TT_ARG_STR:
      return a->str ? mix(h, tt_hash_bytes(a->str, strlen(a->str), 0)) : h;
    default:
      return h;
  }
}

uint64_t tt_graph_call_hash(const tt_call_t* c) {
  /* the op by name, not by address: cut points (the smallest hash of a block)
   * must fall on the same calls in every process, or the disk cache misses */
  uint64_t h = mix(0, tt_hash_bytes(c->op->name, strlen(c->op->name), 0));
  h = mix(h, (uint64_t)c->nargs);
  for (int i = 0; i < c->nargs; i++) h = hash_arg(h, &c->args[i]);
  h = mix(h, (uint64_t)c->nout);
  for (int i = 0; i < c->nout; i++) h = hash_view(mix(h, c->outs[i].storage != NULL), &c->outs[i]);
  return h;
}

/* ---- nodes -------------------------------------------------------------------------- */

tt_status_t tt_graph_append(tt_graph_t* g, const tt_call_t* call) {
  return tt_graph_append_hashed(g, call, tt_graph_call_hash(call));
}

tt_status_t tt_graph_append_hashed(tt_graph_t* g, const tt_call_t* call, uint64_t hash) {
  if (g->n == g->cap) {
    int cap = g->cap ? 2 * g->cap : 256;
    node_t* nodes = realloc(g->nodes, sizeof(node_t) * (size_t)cap);
    if (!nodes) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory (graph)");
    g->nodes = nodes;
    g->cap = cap;
  }
  bool oom = false;
  tt_call_t c = *call;
  tt_call_arg_t* args = arena_copy(g, call->args, sizeof(tt_call_arg_t) * (size_t)call->nargs, &oom);
  if (args)
    for (int i = 0; i < call->nargs; i++) copy_arg(g, &args[i], &oom);
  c.args = args;
  c.outs = arena_copy(g, call->outs, sizeof(tt_view_t) * (size_t)call->nout, &oom);
  c.out_dtypes = arena_copy(g, call->out_dtypes, sizeof(tt_dtype_t) * (size_t)call->nout, &oom);
  if (oom) return tt_status_make(TT_RESOURCE_EXHAUSTED, "out of host memory (graph)");
  g->nodes[g->n].call = c;
  g->nodes[g->n].hash = hash;
  g->n++;
  return NULL;
}

int tt_graph_size(const tt_graph_t* g) { return g->n; }
const tt_call_t* tt_graph_call(const tt_graph_t* g, int i) { return &g->nodes[i].call; }
uint64_t tt_graph_node_hash(const tt_graph_t* g, int i) { return g->nodes[i].hash; }

void tt_graph_reset(tt_graph_t* g) {
  /* keep the blocks for the next graph */
  while (g->head) {
    block_t* b = g->head;
    g->head = b->next;
    b->next = g->spare;
    g->spare = b;
  }
  g->n = 0;
}

int tt_graph_repeat(const tt_graph_t* g, int kmin, int kmax) {
  /* the longest repeat first: a loop body holds shorter repeats (layers,
   * parameters) that occur at several phases of the body */
  if (kmax > g->n / 2) kmax = g->n / 2;
  for (int k = kmax; k >= kmin; k--) {
    int i = 0;
    while (i < k && g->nodes[g->n - 1 - i].hash == g->nodes[g->n - 1 - k - i].hash) i++;
    if (i == k) return k;
  }
  return 0;
}
