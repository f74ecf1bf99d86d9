// Harbor — the timer benchmark's floor: a plain C 4-ary min-heap of timers (see the header).
#include "CHarborTimerFloor.h"

#include <stdlib.h>

struct charbor_floor_timer {
    int64_t fire;
    size_t index;  // position in the heap array
    charbor_floor_callback callback;
    void *userdata;
};

typedef struct {
    int64_t key;
    uint64_t sequence;  // ties fire in the order added
    charbor_floor_timer *timer;
} entry;

struct charbor_floor_heap {
    entry *entries;
    size_t count;
    size_t capacity;
    uint64_t next_sequence;
};

enum { ARITY = 4 };

static inline int precedes(const entry *a, const entry *b) {
    return a->key != b->key ? a->key < b->key : a->sequence < b->sequence;
}

// Sifting moves a hole; each step writes one entry and one timer's index.
static void sift_up(charbor_floor_heap *heap, size_t index) {
    entry moving = heap->entries[index];
    while (index > 0) {
        size_t parent = (index - 1) / ARITY;
        if (!precedes(&moving, &heap->entries[parent])) break;
        heap->entries[index] = heap->entries[parent];
        heap->entries[index].timer->index = index;
        index = parent;
    }
    heap->entries[index] = moving;
    moving.timer->index = index;
}

static void sift_down(charbor_floor_heap *heap, size_t index) {
    entry moving = heap->entries[index];
    size_t count = heap->count;
    for (;;) {
        size_t first = ARITY * index + 1;
        if (first >= count) break;
        size_t child = first;
        size_t end = first + ARITY < count ? first + ARITY : count;
        for (size_t next = first + 1; next < end; next++) {
            if (precedes(&heap->entries[next], &heap->entries[child])) child = next;
        }
        if (!precedes(&heap->entries[child], &moving)) break;
        heap->entries[index] = heap->entries[child];
        heap->entries[index].timer->index = index;
        index = child;
    }
    heap->entries[index] = moving;
    moving.timer->index = index;
}

static void remove_at(charbor_floor_heap *heap, size_t index) {
    size_t last = --heap->count;
    if (index == last) return;
    heap->entries[index] = heap->entries[last];
    if (index > 0 && precedes(&heap->entries[index], &heap->entries[(index - 1) / ARITY])) {
        sift_up(heap, index);
    } else {
        sift_down(heap, index);
    }
}

charbor_floor_heap *charbor_floor_heap_new(void) {
    return calloc(1, sizeof(charbor_floor_heap));
}

void charbor_floor_heap_free(charbor_floor_heap *heap) {
    if (!heap) return;
    for (size_t i = 0; i < heap->count; i++) free(heap->entries[i].timer);
    free(heap->entries);
    free(heap);
}

charbor_floor_timer *charbor_floor_heap_add(charbor_floor_heap *heap, int64_t fire,
                                            charbor_floor_callback callback, void *userdata) {
    if (heap->count == heap->capacity) {
        size_t capacity = heap->capacity ? heap->capacity * 2 : 64;
        entry *grown = realloc(heap->entries, capacity * sizeof(entry));
        if (!grown) return NULL;
        heap->entries = grown;
        heap->capacity = capacity;
    }
    charbor_floor_timer *timer = malloc(sizeof(charbor_floor_timer));
    if (!timer) return NULL;
    timer->fire = fire;
    timer->callback = callback;
    timer->userdata = userdata;
    size_t index = heap->count++;
    heap->entries[index] = (entry){ .key = fire, .sequence = heap->next_sequence++, .timer = timer };
    sift_up(heap, index);
    return timer;
}

size_t charbor_floor_heap_fire_due(charbor_floor_heap *heap, int64_t now) {
    size_t fired = 0;
    while (heap->count > 0 && heap->entries[0].key <= now) {
        charbor_floor_timer *timer = heap->entries[0].timer;
        remove_at(heap, 0);
        timer->callback(timer->userdata);
        free(timer);
        fired++;
    }
    return fired;
}

void charbor_floor_heap_cancel(charbor_floor_heap *heap, charbor_floor_timer *timer) {
    remove_at(heap, timer->index);
    free(timer);
}

size_t charbor_floor_heap_count(const charbor_floor_heap *heap) {
    return heap->count;
}
