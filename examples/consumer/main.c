/* main.c - a program that uses an installed parsum: the sum and the
 * running maximum of a few numbers, and a check that the header and the
 * library linked agree on the version. */
#include <parsum.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    const double x[6] = {2.5, -1.0, 4.0, 3.5, 8.0, 0.5};
    double sum = 0.0, runmax[6];
    char header[32];
    snprintf(header, sizeof header, "%d.%d.%d", PARSUM_VERSION_MAJOR,
             PARSUM_VERSION_MINOR, PARSUM_VERSION_PATCH);
    parsum_context *ctx = NULL;
    parsum_status st = parsum_context_create(&ctx, PARSUM_BACKEND_CPU);
    if (st == PARSUM_OK)
        st = parsum_reduce(ctx, x, 6, PARSUM_F64, PARSUM_SUM, &sum);
    if (st == PARSUM_OK)
        st = parsum_scan(ctx, x, runmax, 6, PARSUM_F64, PARSUM_MAX,
                         PARSUM_INCLUSIVE);
    if (st != PARSUM_OK) {
        fprintf(stderr, "consumer: %s: %s\n", parsum_status_name(st),
                parsum_last_error(ctx));
        parsum_context_destroy(ctx);
        return 1;
    }
    parsum_context_destroy(ctx);
    printf("parsum %s (header %s): sum = %g, running max =", parsum_version(),
           header, sum);
    for (int i = 0; i < 6; i++)
        printf(" %g", runmax[i]);
    printf("\n");
    if (strcmp(parsum_version(), header) != 0 || sum != 17.5 ||
        runmax[5] != 8.0) {
        fprintf(stderr, "consumer: unexpected result\n");
        return 1;
    }
    return 0;
}
