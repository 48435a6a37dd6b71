/*
 * heap.h: the two moves of a binary min-heap kept in an array, for the intrusive heaps of any
 * element type (requests by priority in rqheap.h, by finishing step in cohort.c, sessions by
 * their next turn in scenarios/session.c): each heap gives its order and how an element is
 * stored at a position (which records the position in the element).
 *
 * The arguments: ctx, the heap, passed on to before and set; a, its array; n, its size; i, a
 * position (an int32_t variable, moved); x, the element placed; before(ctx, p, q), whether p goes
 * before q; set(ctx, i, p), stores p at position i.
 */
#ifndef ENG_HEAP_H
#define ENG_HEAP_H

#include <stdint.h>

/* Moves x up from position i towards the root to its place. */
#define ENG_HEAP_SIFT_UP(ctx, a, i, x, before, set)                                                \
    do {                                                                                           \
        while ((i) > 0 && before(ctx, x, (a)[((i)-1) / 2])) {                                      \
            set(ctx, i, (a)[((i)-1) / 2]);                                                         \
            (i) = ((i)-1) / 2;                                                                     \
        }                                                                                          \
        set(ctx, i, x);                                                                            \
    } while (0)

/* Moves x down from position i of the n elements to its place. */
#define ENG_HEAP_SIFT_DOWN(ctx, a, n, i, x, before, set)                                           \
    do {                                                                                           \
        for (;;) {                                                                                 \
            int32_t c_ = 2 * (i) + 1;                                                              \
            if (c_ >= (n))                                                                         \
                break;                                                                             \
            if (c_ + 1 < (n) && before(ctx, (a)[c_ + 1], (a)[c_]))                                 \
                c_++;                                                                              \
            if (!before(ctx, (a)[c_], x))                                                          \
                break;                                                                             \
            set(ctx, i, (a)[c_]);                                                                  \
            (i) = c_;                                                                              \
        }                                                                                          \
        set(ctx, i, x);                                                                            \
    } while (0)

#endif
