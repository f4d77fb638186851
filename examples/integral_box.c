/*
 * integral_box.c - the summed-area table of the lecture notes' 4 x 4
 * image, an O(1) box sum from it, and a 3 x 3 mean blur (box filter,
 * edge pixels replicated). Runs on the GPU when one is present
 * (PARSUM_BACKEND_AUTO), else on the CPU: images are copied into the
 * context's memory with parsum_image_alloc / parsum_image_copy.
 */
#include <parsum.h>
#include <stdio.h>

static int fail(parsum_context *ctx, parsum_status st)
{
    fprintf(stderr, "%s: %s\n", parsum_status_name(st), parsum_last_error(ctx));
    parsum_context_destroy(ctx);
    return 1;
}

int main(void)
{
    uint8_t pixels[16] = {2, 1, 0, 0, 0, 1, 2, 0, 1, 2, 1, 0, 1, 1, 0, 2};
    uint32_t sat[25];
    uint8_t blurred[16];
    /* Host descriptors: packed rows (pitch 0). */
    parsum_image h_img = {pixels, 4, 4, 0, 1, PARSUM_U8, PARSUM_MEM_HOST};
    parsum_image h_sat = {sat, 5, 5, 0, 1, PARSUM_U32, PARSUM_MEM_HOST};
    parsum_image h_blur = {blurred, 4, 4, 0, 1, PARSUM_U8, PARSUM_MEM_HOST};
    parsum_image img = {0}, tab = {0}, blur = {0};
    parsum_context *ctx = NULL;
    parsum_status st = parsum_context_create(&ctx, PARSUM_BACKEND_AUTO);
    if (st != PARSUM_OK)
        return fail(ctx, st);
    if ((st = parsum_image_alloc(ctx, &img, 4, 4, 1, PARSUM_U8)) != PARSUM_OK ||
        (st = parsum_image_alloc(ctx, &tab, 5, 5, 1, PARSUM_U32)) != PARSUM_OK ||
        (st = parsum_image_alloc(ctx, &blur, 4, 4, 1, PARSUM_U8)) != PARSUM_OK ||
        (st = parsum_image_copy(ctx, &img, &h_img)) != PARSUM_OK)
        return fail(ctx, st);

    /* The (W+1) x (H+1) table: a zero first row and column. */
    if ((st = parsum_integral(ctx, &img, &tab, 0, NULL)) != PARSUM_OK ||
        (st = parsum_image_copy(ctx, &h_sat, &tab)) != PARSUM_OK)
        return fail(ctx, st);
    printf("summed-area table:\n");
    for (int y = 1; y < 5; y++) {
        for (int x = 1; x < 5; x++)
            printf(" %2u", (unsigned)sat[y * 5 + x]);
        printf("\n");
    }

    /* Box sum of the 2 x 2 square at (1, 1) from four table entries. */
    parsum_rect rect = {1, 1, 2, 2};
    uint32_t box = 0;
    void *d_rect = NULL, *d_box = NULL;
    if ((st = parsum_alloc(ctx, &d_rect, sizeof rect)) != PARSUM_OK ||
        (st = parsum_alloc(ctx, &d_box, sizeof box)) != PARSUM_OK ||
        (st = parsum_copy(ctx, d_rect, &rect, sizeof rect,
                          PARSUM_COPY_HOST_TO_CONTEXT)) != PARSUM_OK ||
        (st = parsum_integral_box_sums(ctx, &tab, 0, NULL, d_rect, 1,
                                       d_box)) != PARSUM_OK ||
        (st = parsum_copy(ctx, &box, d_box, sizeof box,
                          PARSUM_COPY_CONTEXT_TO_HOST)) != PARSUM_OK)
        return fail(ctx, st);
    printf("sum of the 2x2 box at (1,1): %u\n", (unsigned)box);

    /* 3 x 3 mean, edges replicated, means rounded half up. */
    if ((st = parsum_box_filter(ctx, &img, &blur, 1, 1,
                                PARSUM_BORDER_CLAMP)) != PARSUM_OK ||
        (st = parsum_image_copy(ctx, &h_blur, &blur)) != PARSUM_OK)
        return fail(ctx, st);
    printf("3x3 mean:");
    for (int i = 0; i < 16; i++)
        printf(" %u", (unsigned)blurred[i]);
    printf("\n");

    parsum_free(ctx, d_rect);
    parsum_free(ctx, d_box);
    parsum_image_free(ctx, &img);
    parsum_image_free(ctx, &tab);
    parsum_image_free(ctx, &blur);
    parsum_context_destroy(ctx);
    return 0;
}
