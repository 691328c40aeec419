/* Shorthand for the special family's formula-heavy files (special_bessel.c,
 * special_gamma.c, special_poly.c): elementwise StableHLO on the function
 * being built, which must be a local named `f`. Private to those files. */
#ifndef TT_SPECIAL_SHORTHAND_H_
#define TT_SPECIAL_SHORTHAND_H_

#include "special_util.h"

#define K(like, v) tt__ew_k(f, like, v)
#define ADD(a, b) tt__ew_add(f, a, b)
#define SUB(a, b) tt__ew_sub(f, a, b)
#define MUL(a, b) tt__ew_mul(f, a, b)
#define DIV(a, b) tt__ew_div(f, a, b)
#define SEL(p, a, b) tt_l_select(f, p, a, b)
#define CMP(dir, a, k) tt__ew_cmpk(f, dir, a, k)
#define UN(op, a) tt__sp_un(f, "stablehlo." op, a)

#endif /* TT_SPECIAL_SHORTHAND_H_ */
