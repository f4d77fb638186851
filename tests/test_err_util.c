/*
 * test_err_util.c - the error-test harness of test_err_util.h.
 */
#include "test_err_util.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

size_t te_failures;

static void u32_add(const void *a, const void *b, void *out, void *user)
{
    uint32_t x, y;
    (void)user;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    x += y;
    memcpy(out, &x, 4);
}
static const uint32_t zero32 = 0;
const parsum_custom_op te_add_op = {4, &zero32, u32_add, NULL, "",
                                    "unsigned int", "return a + b;"};

/* The message te_prime_error recorded: still there after a call means the
 * call did not set its own. */
static char primed[512];

void te_prime_error(void)
{
    (void)parsum_copy(tu_ctx, NULL, NULL, 1, (parsum_copy_kind)99);
    snprintf(primed, sizeof primed, "%s", parsum_last_error(tu_ctx));
}

static bool is_ident(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

bool te_has_word(const char *msg, const char *word)
{
    size_t len = strlen(word);
    if (len == 0)
        return true;
    /* Boundaries matter only on a side where word has an identifier
     * character: "[3]" may follow "offsets". */
    bool left = is_ident(word[0]), right = is_ident(word[len - 1]);
    for (const char *p = strstr(msg, word); p != NULL; p = strstr(p + 1, word))
        if ((!left || p == msg || !is_ident(p[-1])) &&
            (!right || !is_ident(p[len])))
            return true;
    return false;
}

void te_check_usable(int line)
{
    int32_t h[100], got[100];
    for (int i = 0; i < 100; i++)
        h[i] = i * 7 - 300;
    void *d = tu_dev_alloc(sizeof h);
    tu_upload(d, h, sizeof h);
    parsum_status st = parsum_scan(tu_ctx, d, d, 100, PARSUM_I32, PARSUM_SUM, 0);
    tu_download(got, d, sizeof got);
    tu_dev_free(d);
    int32_t acc = 0;
    bool ok = st == PARSUM_OK;
    for (int i = 0; i < 100 && ok; i++) {
        acc += h[i];
        ok = got[i] == acc;
    }
    if (!ok)
        tu_report(&te_failures, "  line %d: the context is not usable after "
                  "the error (%s)\n", line, parsum_status_name(st));
}

void te_expect_err(int line, const char *call, parsum_status st,
                   parsum_status want, const char *word)
{
    const char *msg = parsum_last_error(tu_ctx);
    if (st != want) {
        tu_report(&te_failures, "  line %d: %s returned %s, expected %s "
                  "(%s)\n", line, call, parsum_status_name(st),
                  parsum_status_name(want), msg);
    } else if (msg == NULL || *msg == '\0') {
        tu_report(&te_failures, "  line %d: %s: empty parsum_last_error\n",
                  line, call);
    } else if (strcmp(msg, primed) == 0) {
        tu_report(&te_failures, "  line %d: %s did not set parsum_last_error "
                  "(still \"%s\")\n", line, call, msg);
    } else if (!te_has_word(msg, word)) {
        tu_report(&te_failures, "  line %d: %s: message \"%s\" does not name "
                  "\"%s\"\n", line, call, msg, word);
    }
    te_check_usable(line);
}
