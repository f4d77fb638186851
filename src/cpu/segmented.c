/* cpu/segmented.c - work in progress (segmented operations, issue 4). */
#include "parsum.h"
