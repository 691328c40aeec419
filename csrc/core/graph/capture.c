/* Captured programs (torch.compile, DESIGN §8): what it takes to run the
 * one program a compiled graph's calls ran as again, on the graph's next
 * inputs, without recording them (tt_program.h). The runtime notes the plan
 * of the flush that ends a capture and replays it; here each of its
 * storages is named by role, and what a replay could not reproduce is
 * refused: a storage that is neither an input nor new, a host value the
 * caller cannot pass again. */
#include <stdlib.h>
#include <string.h>

#include "tt_program.h"

tt_capture_t* tt_capture_create(void) { return calloc(1, sizeof(tt_capture_t)); }

void tt_capture_destroy(tt_capture_t* c) {
  if (!c) return;
  free(c->key);
  free(c->st);
  free(c->res);
  for (int g = 0; g < c->ngroups; g++) {
    free(c->group_bytes[g]);
    free(c->group_host[g]);
  }
  free(c->rng);
  free(c->new_nbytes);
  free(c->out_slot);
  free(c);
}

int tt_capture_device(const tt_capture_t* c) { return c->device; }
int tt_capture_new_count(const tt_capture_t* c) { return c->nnew; }
size_t tt_capture_new_nbytes(const tt_capture_t* c, int j) { return c->new_nbytes[j]; }
int tt_capture_output_slot(const tt_capture_t* c, int i) { return c->out_slot[i]; }
bool tt_capture_uses_rng(const tt_capture_t* c) { return c->nrng > 0; }

void tt_capture_note(tt_capture_t* c, const tt_plan_t* p, uint64_t hash, int nchecks,
                     uint64_t (*born)(void* ctx, tt_storage_t* s), void* ctx) {
  c->has_program = true;
  c->device = p->calls[0]->device;
  c->name = tt_plan_name(p, true);
  c->hash = hash;
  c->nchecks = nchecks;
  c->key = malloc(p->key.len ? p->key.len : 1);
  c->st = calloc((size_t)p->nst + 1, sizeof(*c->st));
  c->res = malloc(sizeof(int) * ((size_t)p->nres + 1));
  if (!c->key || !c->st || !c->res) goto oom;
  memcpy(c->key, p->key.data, p->key.len);
  c->key_len = p->key.len;
  c->nst = p->nst;
  for (int i = 0; i < p->nst; i++) {
    const tt_plan_st_t* ps = &p->st[i];
    tt_capture_st_t* cs = &c->st[i];
    cs->s = ps->s;
    cs->nbytes = p->env->nbytes(p->env->ctx, ps->s);
    cs->born = born(ctx, ps->s);
    cs->param = ps->param;
    cs->param_dtype = ps->param_dtype;
    cs->param_numel = ps->param_numel;
    cs->zero = ps->zero;
    cs->result = ps->result;
    cs->res_dtype = ps->dtype;
    cs->res_numel = ps->numel;
    cs->producer = ps->producer;
  }
  memcpy(c->res, p->res_st, sizeof(int) * (size_t)p->nres);
  c->nres = p->nres;
  c->ngroups = p->ngroups;
  for (int g = 0; g < p->ngroups; g++) {
    size_t sz = tt_dtype_size(p->group_dt[g]);
    c->group_dt[g] = p->group_dt[g];
    c->group_n[g] = p->group_n[g];
    c->group_bytes[g] = calloc((size_t)p->group_n[g] + 1, sz);
    c->group_host[g] = malloc(sizeof(int64_t) * ((size_t)p->group_n[g] + 1));
    if (!c->group_bytes[g] || !c->group_host[g]) goto oom;
    for (int i = 0; i < p->nextra; i++)
      if (p->extra[i].packed && p->extra[i].group == g) {
        memcpy(c->group_bytes[g] + (size_t)p->extra[i].slot * sz, p->extra[i].bytes, sz);
        c->group_host[g][p->extra[i].slot] = (int64_t)p->extra[i].host_id; /* an index, later */
      }
  }
  /* a fused plan packs every runtime scalar: its other parameters are the
   * RNG states, one per RNG call, in call order */
  for (int k = 0; k < p->ncalls; k++)
    if (p->calls[k]->op->flags & TT_LF_RNG) c->nrng++;
  c->rng = malloc(sizeof(uint64_t) * 2 * ((size_t)c->nrng + 1));
  if (!c->rng) goto oom;
  for (int k = 0, r = 0; k < p->ncalls; k++)
    if (p->calls[k]->op->flags & TT_LF_RNG) {
      c->rng[2 * r] = p->calls[k]->rng[0];
      c->rng[2 * r + 1] = p->calls[k]->rng[1];
      r++;
    }
  return;
oom:
  c->oom = true;
}

/* The slot of a storage the calls created: numbered on first sight. */
static int new_slot(tt_capture_t* c, const tt_storage_t* s, size_t nbytes, const tt_storage_t*** seen,
                    int* cap) {
  for (int j = 0; j < c->nnew; j++)
    if ((*seen)[j] == s) return -j - 1;
  if (c->nnew == *cap) {
    int n = *cap ? 2 * *cap : 16;
    const tt_storage_t** a = realloc(*seen, sizeof(*a) * (size_t)n);
    size_t* b = realloc(c->new_nbytes, sizeof(*b) * (size_t)n);
    if (a) *seen = a;
    if (b) c->new_nbytes = b;
    if (!a || !b) return TT_CAPTURE_NONE;
    *cap = n;
  }
  (*seen)[c->nnew] = s;
  c->new_nbytes[c->nnew] = nbytes;
  c->nnew++;
  return -c->nnew;
}

static int input_slot(tt_storage_t* const* inputs, int nin, const tt_storage_t* s) {
  for (int k = 0; k < nin; k++)
    if (inputs[k] == s) return k;
  return -1;
}

static bool in_program(const tt_capture_t* c, const tt_storage_t* s) {
  for (int i = 0; i < c->nst; i++)
    if (c->st[i].s == s) return true;
  return false;
}

/* Names every storage of the noted program and every output by role. */
static const char* assign_slots(tt_capture_t* c, uint64_t serial0, tt_storage_t* const* inputs, int nin,
                                const tt_capture_output_t* outputs, int nout) {
  const tt_storage_t** seen = NULL;
  int cap = 0;
  const char* why = NULL;
  for (int i = 0; i < c->nst && !why; i++) {
    tt_capture_st_t* cs = &c->st[i];
    if (!cs->param && !cs->zero && !cs->result) continue; /* an intermediate (freed by now) */
    int k = input_slot(inputs, nin, cs->s);
    if (k >= 0) cs->slot = k;
    else if (cs->born > serial0) cs->slot = new_slot(c, cs->s, cs->nbytes, &seen, &cap);
    else why = "the graph uses a tensor that is not one of its inputs";
    if (cs->slot == TT_CAPTURE_NONE) why = "out of host memory";
  }
  c->out_slot = malloc(sizeof(int) * ((size_t)nout + 1));
  if (!c->out_slot && !why) why = "out of host memory";
  c->nout = nout;
  for (int i = 0; i < nout && !why; i++) {
    const tt_capture_output_t* o = &outputs[i];
    int slot = TT_CAPTURE_NONE;
    if (o->s) {
      int k = input_slot(inputs, nin, o->s);
      if (k >= 0) slot = k;
      else if (o->born > serial0 && (o->empty || (c->has_program && in_program(c, o->s))))
        slot = new_slot(c, o->s, o->nbytes, &seen, &cap); /* written by the program, or never written */
      else why = "an output of the graph is neither an input nor made by the graph";
      if (!why && slot == TT_CAPTURE_NONE) why = "out of host memory";
    }
    c->out_slot[i] = slot;
  }
  /* a new storage the program reads before writing it was empty when made:
   * a fresh one is empty too */
  for (int i = 0; i < c->nst; i++) c->st[i].s = NULL;
  free(seen);
  return why;
}

/* Host tensors' values in packed slots: each slot that took one of the
 * caller's host values takes it again at replay (by index). A host tensor
 * that is not one of them (a temporary the caller cannot name) refuses the
 * capture: its value might change. Python numbers (no identity) are
 * constants. */
static const char* map_host_values(tt_capture_t* c, const uint64_t* host_ids, int nhost) {
  c->nhost = nhost;
  for (int g = 0; g < c->ngroups; g++)
    for (int k = 0; k < c->group_n[g]; k++) {
      uint64_t id = (uint64_t)c->group_host[g][k];
      int64_t idx = -1;
      for (int h = 0; id && h < nhost && idx < 0; h++)
        if (host_ids[h] == id) idx = h;
      if (id && idx < 0) return "a device op of the graph took a CPU tensor that is not one of its host values";
      c->group_host[g][k] = idx;
      if (idx >= 0) c->has_host = true;
    }
  return NULL;
}

const char* tt_capture_assign(tt_capture_t* c, uint64_t serial0, tt_storage_t* const* inputs, int nin,
                              const tt_capture_output_t* outputs, int nout, const uint64_t* host_ids,
                              int nhost) {
  c->nin = nin;
  const char* why = assign_slots(c, serial0, inputs, nin, outputs, nout);
  return why ? why : map_host_values(c, host_ids, nhost);
}

const unsigned char* tt_capture_group_bytes(const tt_capture_t* c, int g, const void* const* host_vals,
                                            unsigned char** scratch) {
  *scratch = NULL;
  size_t sz = tt_dtype_size(c->group_dt[g]);
  if (!c->has_host) return c->group_bytes[g];
  for (int k = 0; k < c->group_n[g]; k++) {
    int64_t h = c->group_host[g][k];
    if (h < 0) continue;
    if (!*scratch) {
      *scratch = malloc((size_t)c->group_n[g] * sz + 1);
      if (!*scratch) return NULL;
      memcpy(*scratch, c->group_bytes[g], (size_t)c->group_n[g] * sz);
    }
    memcpy(*scratch + (size_t)k * sz, host_vals[h], sz);
  }
  return *scratch ? *scratch : c->group_bytes[g];
}
