/* The build of a user's program, as the translation unit that calls
 * sb_user_main or sb_user_main_kernels sees it: its compiler and what its
 * predefined macros say of the options that move bits (optimisation,
 * fast-math, FMA contraction, AVX-512). The two calls are macros that hand
 * it to sb_user_main_build, and the traces and goldens the program writes
 * name it in their build line beside libsamebits' own build. Included at
 * the end of samebits.h. */
#ifndef SB_USER_BUILD_H
#define SB_USER_BUILD_H

#if defined(__clang__)
#define SB_USER_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define SB_USER_COMPILER "gcc " __VERSION__
#else
#define SB_USER_COMPILER "cc (unknown)"
#endif
#ifdef __OPTIMIZE__
#define SB_USER_OPTIMIZE " optimized"
#else
#define SB_USER_OPTIMIZE " unoptimized"
#endif
#ifdef __FAST_MATH__
#define SB_USER_FAST_MATH " fast-math"
#else
#define SB_USER_FAST_MATH ""
#endif
#ifdef __FMA__
#define SB_USER_FMA " fma"
#else
#define SB_USER_FMA ""
#endif
#ifdef __AVX512F__
#define SB_USER_AVX512 " avx512f"
#else
#define SB_USER_AVX512 ""
#endif
#define SB_USER_BUILD SB_USER_COMPILER SB_USER_OPTIMIZE SB_USER_FAST_MATH SB_USER_FMA SB_USER_AVX512

/* sb_user_main_kernels with the program's build (NULL: not known). */
int sb_user_main_build(int argc, char **argv, const sb_user_kernel *kernels, size_t n,
                       const char *build);
#define sb_user_main_kernels(argc, argv, kernels, n)                            \
    sb_user_main_build(argc, argv, kernels, n, SB_USER_BUILD)
#define sb_user_main(argc, argv, k) sb_user_main_build(argc, argv, k, 1, SB_USER_BUILD)

#endif
