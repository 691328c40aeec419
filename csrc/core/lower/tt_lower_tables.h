/* Internal to core/lower: the family tables the registry indexes. Adding a
 * family: define `const tt_lower_entry_t tt_lower_<name>[]` and
 * `const int tt_lower_<name>_count` in its own file and add it here; its facts
 * (tt_lower_fact_t), if any, go beside the table and into TT_LOWER_FACT_FAMILIES. */
#ifndef TT_LOWER_TABLES_H_
#define TT_LOWER_TABLES_H_

#include "tt_lower.h"

#define TT_LOWER_FAMILIES(X) \
  X(unary)                   \
  X(binary)                  \
  X(foreach)                 \
  X(matmul)                  \
  X(grouped_mm)              \
  X(reduce)                  \
  X(nn)                      \
  X(index)                   \
  X(create)                  \
  X(conv)                    \
  X(pool)                    \
  X(norm)                    \
  X(loss)                    \
  X(sort)                    \
  X(shape)                   \
  X(resample)                \
  X(rnn)                     \
  X(optim)                   \
  X(index_more)              \
  X(index_more_misc)         \
  X(random_more)             \
  X(random_dist)             \
  X(index_more_search)       \
  X(scan)                    \
  X(special)                 \
  X(linalg)                  \
  X(nn_more)                 \
  X(nn_more_fold)            \
  X(linalg_decomp)           \
  X(fft)                     \
  X(complex_ops)             \
  X(grid_sample)             \
  X(nn_more_loss)            \
  X(nn_more_pool)            \
  X(nn_more_aa)              \
  X(nn_more_ctc)              \
  X(attention)

/* The families whose files also define `const tt_lower_fact_t tt_lower_<name>_facts[]`
 * and `const int tt_lower_<name>_facts_count` (see tt_lower_fact_t). */
#define TT_LOWER_FACT_FAMILIES(X) \
  X(unary)                        \
  X(binary)                       \
  X(foreach)                      \
  X(matmul)                       \
  X(reduce)                       \
  X(index)                        \
  X(create)                       \
  X(shape)                        \
  X(index_more)                   \
  X(index_more_misc)              \
  X(scan)                         \
  X(special)                      \
  X(linalg)                       \
  X(nn_more)                      \
  X(linalg_decomp)                \
  X(fft)                          \
  X(complex_ops)                  \
  X(norm)                         \
  X(sort)                         \
  X(nn)                           \
  X(attention)

#define TT_DECLARE_FACTS(name)                     \
  extern const tt_lower_fact_t tt_lower_##name##_facts[]; \
  extern const int tt_lower_##name##_facts_count;
TT_LOWER_FACT_FAMILIES(TT_DECLARE_FACTS)
#undef TT_DECLARE_FACTS

#define TT_DECLARE_FAMILY(name)                   \
  extern const tt_lower_entry_t tt_lower_##name[]; \
  extern const int tt_lower_##name##_count;
TT_LOWER_FAMILIES(TT_DECLARE_FAMILY)
#undef TT_DECLARE_FAMILY

#define TT_TABLE_COUNT(t) ((int)(sizeof(t) / sizeof((t)[0])))

#endif /* TT_LOWER_TABLES_H_ */
