/* The column macros of the kernel list (kernels.def).
 *
 * A file that needs one view of the list defines SB_OP(name, area, params,
 * outputs, inputs, bound, loose, hashed, refd, signature) to keep the
 * columns it needs, includes kernels.def, and turns each column into code
 * with the macros below. They work by pasting: a column's first token is
 * glued onto a prefix, so SB_ROLES_ ## outputs, with outputs OUT2(param,
 * moment), becomes SB_ROLES_OUT2(param, moment), a call of the macro that
 * makes that view; a flag column (BOUND or EXACT, ...) pasted onto SB_IF_
 * or SB_CHOOSE_ picks a branch. */
#ifndef SB_OP_LIST_H
#define SB_OP_LIST_H

/* ---- the tensors: OUT1(a) .. OUT3(a, b, c), IN0() .. IN4(a, b, c, d) ----- */

/* How many. */
#define SB_COUNT_OUT1(a) 1
#define SB_COUNT_OUT2(a, b) 2
#define SB_COUNT_OUT3(a, b, c) 3
#define SB_COUNT_IN0() 0
#define SB_COUNT_IN1(a) 1
#define SB_COUNT_IN2(a, b) 2
#define SB_COUNT_IN3(a, b, c) 3
#define SB_COUNT_IN4(a, b, c, d) 4

/* Their roles, as an initializer of an sb_role array (IN0: one unused slot). */
#define SB_ROLES_OUT1(a) {SB_ROLE_##a}
#define SB_ROLES_OUT2(a, b) {SB_ROLE_##a, SB_ROLE_##b}
#define SB_ROLES_OUT3(a, b, c) {SB_ROLE_##a, SB_ROLE_##b, SB_ROLE_##c}
#define SB_ROLES_IN0() {SB_ROLE_COUNT}
#define SB_ROLES_IN1(a) {SB_ROLE_##a}
#define SB_ROLES_IN2(a, b) {SB_ROLE_##a, SB_ROLE_##b}
#define SB_ROLES_IN3(a, b, c) {SB_ROLE_##a, SB_ROLE_##b, SB_ROLE_##c}
#define SB_ROLES_IN4(a, b, c, d) {SB_ROLE_##a, SB_ROLE_##b, SB_ROLE_##c, SB_ROLE_##d}

/* The tensors of the op call `c` (an sb_op_call * in scope) as call
 * arguments, each followed by a comma. The data pointers are void *, which
 * C converts to the float * or int32_t * the signature wants. */
#define SB_ARGS_OUT1(a) (c)->out[0].data,
#define SB_ARGS_OUT2(a, b) SB_ARGS_OUT1(a) (c)->out[1].data,
#define SB_ARGS_OUT3(a, b, c_) SB_ARGS_OUT2(a, b) (c)->out[2].data,
#define SB_ARGS_IN0()
#define SB_ARGS_IN1(a) (c)->in[0].data,
#define SB_ARGS_IN2(a, b) SB_ARGS_IN1(a) (c)->in[1].data,
#define SB_ARGS_IN3(a, b, c_) SB_ARGS_IN2(a, b) (c)->in[2].data,
#define SB_ARGS_IN4(a, b, c_, d) SB_ARGS_IN3(a, b, c_) (c)->in[3].data,

/* ---- params: the tail of the signature, from the op call `c` ------------- */

#define SB_TAIL_conv &(c)->conv
#define SB_TAIL_dense &(c)->dense
#define SB_TAIL_pool &(c)->pool
#define SB_TAIL_cls &(c)->cls
#define SB_TAIL_clsd &(c)->cls
#define SB_TAIL_count (c)->n
#define SB_TAIL_dropout &(c)->dropout, (c)->n
#define SB_TAIL_sgd &(c)->optim, (c)->n
#define SB_TAIL_rmsprop &(c)->optim, (c)->n
#define SB_TAIL_adam &(c)->optim, (c)->t, (c)->n
#define SB_TAIL_adadelta &(c)->optim, (c)->n
#define SB_TAIL_embed &(c)->embed
#define SB_TAIL_norm &(c)->norm
#define SB_TAIL_attn &(c)->attn
#define SB_TAIL_rope &(c)->rope
#define SB_TAIL_adamw &(c)->optim, (c)->t, (c)->n
#define SB_TAIL_nll &(c)->nll
#define SB_TAIL_reduce &(c)->reduce
#define SB_TAIL_window &(c)->window

/* An op's call of kernel `fn` with the tensors and params of `c`. */
#define SB_OP_CALL(fn, params, outputs, inputs)                                \
    fn(SB_ARGS_##outputs SB_ARGS_##inputs SB_TAIL_##params)

/* A reducing op's bound function over `c`: the op's arguments with `out`,
 * the bound, in place of its one output. */
#define SB_OP_CALL_BOUND(fn, out, params, inputs)                              \
    fn(out, SB_ARGS_##inputs SB_TAIL_##params)

/* ---- flags ----------------------------------------------------------------
 * SB_IF_<flag>(...) keeps its arguments when the flag is set;
 * SB_CHOOSE_<flag>(yes, no) is yes when it is set, no when not.
 * SB_FLAG_<flag> names each word a flag column may hold, so that
 * SB_CHECK_FLAGS can stop a misspelt one with "SB_FLAG_<word> undeclared". */
enum sb_list_flag {
    SB_FLAG_BOUND, SB_FLAG_EXACT, SB_FLAG_LOOSE, SB_FLAG_AS_DET,
    SB_FLAG_HASHED, SB_FLAG_UNHASHED, SB_FLAG_REFD, SB_FLAG_NO_REFD,
};
#define SB_CHECK_FLAGS(name, bound, loose, hashed, refd)                        \
    _Static_assert(SB_FLAG_##bound >= 0 && SB_FLAG_##loose >= 0 &&             \
                   SB_FLAG_##hashed >= 0 && SB_FLAG_##refd >= 0,              \
                   "the flags of " #name);

#define SB_IF_BOUND(...) __VA_ARGS__
#define SB_IF_EXACT(...)
#define SB_CHOOSE_BOUND(yes, no) yes
#define SB_CHOOSE_EXACT(yes, no) no

#define SB_IF_LOOSE(...) __VA_ARGS__
#define SB_IF_AS_DET(...)
#define SB_CHOOSE_LOOSE(yes, no) yes
#define SB_CHOOSE_AS_DET(yes, no) no

#define SB_IF_HASHED(...) __VA_ARGS__
#define SB_IF_UNHASHED(...)
#define SB_CHOOSE_HASHED(yes, no) yes
#define SB_CHOOSE_UNHASHED(yes, no) no

#define SB_IF_REFD(...) __VA_ARGS__
#define SB_IF_NO_REFD(...)
#define SB_CHOOSE_REFD(yes, no) yes
#define SB_CHOOSE_NO_REFD(yes, no) no

/* ---- the columns of params.def ------------------------------------------ */

#define SB_OPTIM_NONE SB_OPTIM_COUNT

#define SB_CHOOSE_BATCHED(yes, no) yes
#define SB_CHOOSE_UNBATCHED(yes, no) no

/* The label range of the op call `c` (an sb_op_call * in scope). */
#define SB_LABEL_RANGE_LABELS(member) (c)->member
#define SB_LABEL_RANGE_NO_LABELS 0

/* The signature's parameters without their parentheses. */
#define SB_UNPAREN(...) __VA_ARGS__

#endif
