/* scan_basic.c - the smallest parsum program: an inclusive prefix sum. */
#include <parsum.h>
#include <stdio.h>

int main(void)
{
    int32_t in[8] = {3, 1, 7, 0, 4, 1, 6, 3}, out[8];
    parsum_context *ctx = NULL;
    parsum_status st = parsum_context_create(&ctx, PARSUM_BACKEND_CPU);
    if (st == PARSUM_OK)
        st = parsum_scan(ctx, in, out, 8, PARSUM_I32, PARSUM_SUM,
                         PARSUM_INCLUSIVE);
    if (st != PARSUM_OK) {
        fprintf(stderr, "%s: %s\n", parsum_status_name(st),
                parsum_last_error(ctx));
        parsum_context_destroy(ctx);
        return 1;
    }
    for (int i = 0; i < 8; i++)
        printf("%d ", (int)out[i]); /* 3 4 11 11 15 16 22 25 */
    printf("\n");
    parsum_context_destroy(ctx);
    return 0;
}
