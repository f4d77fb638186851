/*
 * test_err_util.h - the harness of the error tests (test_errors.c for scan,
 * reduce and the small API functions; test_segmented_errors.c for the
 * segmented and keyed operations), kept in one place so both hold a
 * rejected call to the same standard:
 *
 *   (1) the documented status;
 *   (2) a non-empty parsum_last_error() that is fresh (an unrelated error
 *       is recorded on tu_ctx before the call, and must have been
 *       replaced) and names the bad argument;
 *   (3) a context that still works: a correct scan follows.
 *
 * Failures are counted in te_failures (each test resets it in its setup
 * and asserts it is 0 at the end), so one test reports every bad call
 * rather than stopping at the first.
 */
#ifndef PARSUM_TEST_ERR_UTIL_H
#define PARSUM_TEST_ERR_UTIL_H

#include "test_util.h"

/* Failures reported so far by the checks below (and by the program's own
 * tu_report(&te_failures, ...) calls). */
extern size_t te_failures;

/* A trivial custom operator (sum of uint32, identity 0) with its CUDA
 * source, for calls whose custom operator is not what is wrong (copy it to
 * break one field). */
extern const parsum_custom_op te_add_op;

/* Records an unrelated error on tu_ctx, so that a call that fails without
 * setting its own message shows (its message would still be this one). */
void te_prime_error(void);

/* True when msg names word. A word that begins (ends) with an identifier
 * character must not have one before (after) it in msg, so "in" is not
 * found in "index" nor "n" in "num_segments"; text that begins and ends
 * otherwise, such as "[3]" (an index into an argument), matches anywhere,
 * also right after the argument's name ("offsets[3]"). */
bool te_has_word(const char *msg, const char *word);

/* Runs a scan of 100 I32 in place, checked against a plain loop; a
 * failure is reported with line. */
void te_check_usable(int line);

/* Checks (1) to (3) above for a call (its text, for the report) that
 * returned st at line, after te_prime_error(). */
void te_expect_err(int line, const char *call, parsum_status st,
                   parsum_status want, const char *word);

/* call must fail with status want and a fresh message that names word:
 * an argument name, matched as a word, or text such as "[3]" (see
 * te_has_word). */
#define EXPECT_ERR(call, want, word) \
    te_expect_err(__LINE__, #call, (te_prime_error(), (call)), want, word)

/* call must return want (any status, PARSUM_OK included); nothing else is
 * checked, for calls without a context or that must succeed. */
#define EXPECT_STATUS(call, want)                                            \
    do {                                                                     \
        parsum_status st_ = (call);                                          \
        if (st_ != (want))                                                   \
            tu_report(&te_failures, "  line %d: %s returned %s, expected "   \
                      "%s (%s)\n", __LINE__, #call,                          \
                      parsum_status_name(st_), parsum_status_name(want),     \
                      parsum_last_error(tu_ctx));                            \
    } while (0)

/* Skips the calling test on the CPU backend: for the checks only a GPU
 * context makes (host memory given as device data, misaligned elements,
 * CUDA source of custom operators). A macro, so cmocka reports the test's
 * own line. */
#define TE_GPU_ONLY()                                                        \
    do {                                                                     \
        if (tu_backend == PARSUM_BACKEND_CPU)                                \
            skip();                                                          \
    } while (0)

#endif
