/*
 * sort_structs.c - a comparison sort with your own order: employee
 * records sorted by salary. The sort is stable, so records with the same
 * salary keep their input order (here: by name, as they were given).
 *
 * The order is a C callback for the CPU and the same test as CUDA source
 * for a GPU, which parsum compiles at run time. The data go through
 * parsum_alloc and parsum_copy, so the program runs on either backend:
 *
 *   sort_structs          CPU
 *   sort_structs auto     the GPU when one is present, else the CPU
 *   sort_structs cuda     the GPU
 */
#include <parsum.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct employee {
    char name[12];
    unsigned salary;
} employee;

static int by_salary(const void *a, const void *b, void *user)
{
    employee x, y;
    (void)user;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return x.salary < y.salary;
}

static const parsum_comparator salary_order = {
    .elem_size = sizeof(employee),
    .less = by_salary,
    .user = NULL,
    .cuda_type = "struct Emp { char name[12]; unsigned salary; };",
    .cuda_type_name = "Emp",
    .cuda_less = "return a.salary < b.salary;",
    .cuda_user = NULL,
};

static int fail(parsum_context *ctx, parsum_status st)
{
    fprintf(stderr, "sort_structs: %s: %s\n", parsum_status_name(st),
            parsum_last_error(ctx));
    parsum_context_destroy(ctx);
    return 1;
}

int main(int argc, char **argv)
{
    parsum_backend backend = PARSUM_BACKEND_CPU;
    if (argc > 1)
        backend = strcmp(argv[1], "cuda") == 0   ? PARSUM_BACKEND_CUDA
                  : strcmp(argv[1], "auto") == 0 ? PARSUM_BACKEND_AUTO
                                                 : PARSUM_BACKEND_CPU;
    employee staff[] = {
        {"ada", 5200},   {"brian", 4100}, {"carol", 5200},
        {"dennis", 3900}, {"edsger", 4100}, {"frances", 6100},
        {"grace", 5200}, {"ken", 3900},
    };
    const size_t n = sizeof staff / sizeof staff[0];
    parsum_context *ctx = NULL;
    void *buf = NULL;
    parsum_status st = parsum_context_create(&ctx, backend);
    if (st == PARSUM_OK)
        st = parsum_alloc(ctx, &buf, sizeof staff);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, buf, staff, sizeof staff,
                         PARSUM_COPY_HOST_TO_CONTEXT);
    if (st == PARSUM_OK) /* in place: out may be in */
        st = parsum_sort_custom(ctx, buf, buf, n, &salary_order);
    if (st == PARSUM_OK)
        st = parsum_copy(ctx, staff, buf, sizeof staff,
                         PARSUM_COPY_CONTEXT_TO_HOST);
    parsum_free(ctx, buf);
    if (st != PARSUM_OK)
        return fail(ctx, st);
    printf("by salary (%s):", parsum_backend_name(parsum_context_backend(ctx)));
    for (size_t i = 0; i < n; i++)
        printf(" %s:%u", staff[i].name, staff[i].salary);
    printf("\n");
    parsum_context_destroy(ctx);
    return 0;
}
