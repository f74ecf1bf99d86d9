// Harbor — the timer benchmark's floor: a plain C 4-ary min-heap of timers (harbor-bench only).
//
// What a C program would write for many timers: one malloc'd struct per
// timer that knows its heap position, a heap array of (fire date, sequence,
// timer) entries, O(log n) add and cancel at the known position, and firing
// by popping the minimum and calling the timer's function. No locks, no
// reference counts, no system calls: the cost of the data structure alone.
#ifndef CHARBOR_TIMER_FLOOR_H
#define CHARBOR_TIMER_FLOOR_H

#include <stddef.h>
#include <stdint.h>

typedef struct charbor_floor_timer charbor_floor_timer;
typedef struct charbor_floor_heap charbor_floor_heap;

/// A timer's function, called with its userdata when it fires.
typedef void (*charbor_floor_callback)(void *userdata);

/// An empty heap (NULL if out of memory).
charbor_floor_heap *charbor_floor_heap_new(void);

/// Frees the heap and every timer still in it (without calling them).
void charbor_floor_heap_free(charbor_floor_heap *heap);

/// Allocates a timer due at `fire` (nanoseconds on any clock) and adds it.
/// Returns NULL if out of memory.
charbor_floor_timer *charbor_floor_heap_add(charbor_floor_heap *heap, int64_t fire,
                                            charbor_floor_callback callback, void *userdata);

/// Pops every timer due at `now`, earliest first, calls it and frees it.
/// Returns how many fired.
size_t charbor_floor_heap_fire_due(charbor_floor_heap *heap, int64_t now);

/// Removes a timer that has not fired and frees it.
void charbor_floor_heap_cancel(charbor_floor_heap *heap, charbor_floor_timer *timer);

/// Timers in the heap.
size_t charbor_floor_heap_count(const charbor_floor_heap *heap);

#endif
