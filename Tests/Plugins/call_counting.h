/* The counting half of the call counters (LD_PRELOAD), shared by call_counter.c (a plugin's run()) and
 * Tests/VirtualMic/stream_call_counter.c (koe live's PipeWire process step): glibc's heap entry points and the
 * pthread lock and wait calls replaced by counting ones, the counts kept while a thread is within begin_run() and
 * end_run(), and written to COUNT_OUTPUT when the process exits (see call_counter.c for the names). A counter
 * includes this file once, marks its runs, and may fill `segments` for the "outside" count.
 * Allocation goes to glibc's own entry points, so this file never calls the functions it replaces. */
#ifndef KOE_CALL_COUNTING_H
#define KOE_CALL_COUNTING_H

#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

enum { MAX_SEGMENTS = 16 };

static struct { uintptr_t start, end; } segments[MAX_SEGMENTS];
static atomic_int segment_count;
static atomic_long runs, frames, first_frames, heap_calls, lock_calls, last_frame, outside_calls;
static __thread int in_run;
static __thread long calls_in_this_run;

static int from_object(const void *address) {
    uintptr_t value = (uintptr_t)address;
    int count = atomic_load(&segment_count);
    for (int i = 0; i < count; ++i) {
        if (value >= segments[i].start && value < segments[i].end) return 1;
    }
    return 0;
}

static void count_heap(void *return_address) {
    if (in_run) {
        atomic_fetch_add(&heap_calls, 1);
        ++calls_in_this_run;
    } else if (from_object(return_address)) {
        atomic_fetch_add(&outside_calls, 1);
    }
}

static void count_lock(void) {
    if (in_run) {
        atomic_fetch_add(&lock_calls, 1);
        ++calls_in_this_run;
    }
}

/* run() wrapped: the call is counted, and every heap or lock call under it. */
static void begin_run(unsigned long count) {
    ++in_run;
    calls_in_this_run = 0;
    if (atomic_fetch_add(&runs, 1) == 0) atomic_store(&first_frames, (long)count);
    atomic_fetch_add(&frames, (long)count);
}

static void end_run(void) {
    if (calls_in_this_run > 0) atomic_store(&last_frame, atomic_load(&frames));
    --in_run;
}

#define COUNT_HEAP() count_heap(__builtin_return_address(0))

void *malloc(size_t size) { COUNT_HEAP(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { COUNT_HEAP(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { COUNT_HEAP(); return __libc_realloc(pointer, size); }
void free(void *pointer) { if (pointer) COUNT_HEAP(); __libc_free(pointer); }

int posix_memalign(void **pointer, size_t alignment, size_t size) {
    COUNT_HEAP();
    *pointer = __libc_memalign(alignment, size);
    return *pointer ? 0 : 12; /* ENOMEM */
}

void *aligned_alloc(size_t alignment, size_t size) { COUNT_HEAP(); return __libc_memalign(alignment, size); }
void *memalign(size_t alignment, size_t size) { COUNT_HEAP(); return __libc_memalign(alignment, size); }

/* C++ operator new and delete, and FFTW's allocator: within run() they count whoever calls them. */
void *_Znwm(size_t size) { COUNT_HEAP(); return __libc_malloc(size); }
void *_Znam(size_t size) { COUNT_HEAP(); return __libc_malloc(size); }
void _ZdlPv(void *pointer) { COUNT_HEAP(); __libc_free(pointer); }
void _ZdlPvm(void *pointer, size_t size) { (void)size; COUNT_HEAP(); __libc_free(pointer); }
void _ZdaPv(void *pointer) { COUNT_HEAP(); __libc_free(pointer); }
void *fftw_malloc(size_t size) { COUNT_HEAP(); return __libc_memalign(64, size); }
void fftw_free(void *pointer) { COUNT_HEAP(); __libc_free(pointer); }

/* Each lock entry point forwards to the next definition, found once. */
#define FORWARD_LOCK(name, parameters, arguments)                                     \
    int name parameters {                                                             \
        static int (*next) parameters;                                                \
        if (!next) next = (int (*) parameters)dlsym(RTLD_NEXT, #name);                \
        count_lock();                                                                 \
        return next arguments;                                                        \
    }

FORWARD_LOCK(pthread_mutex_lock, (pthread_mutex_t *mutex), (mutex))
FORWARD_LOCK(pthread_mutex_trylock, (pthread_mutex_t *mutex), (mutex))
FORWARD_LOCK(pthread_mutex_timedlock, (pthread_mutex_t *mutex, const struct timespec *until), (mutex, until))
FORWARD_LOCK(pthread_rwlock_rdlock, (pthread_rwlock_t *lock), (lock))
FORWARD_LOCK(pthread_rwlock_wrlock, (pthread_rwlock_t *lock), (lock))
FORWARD_LOCK(pthread_cond_wait, (pthread_cond_t *condition, pthread_mutex_t *mutex), (condition, mutex))
FORWARD_LOCK(pthread_cond_timedwait, (pthread_cond_t *condition, pthread_mutex_t *mutex, const struct timespec *until),
             (condition, mutex, until))
FORWARD_LOCK(sem_wait, (sem_t *semaphore), (semaphore))
FORWARD_LOCK(sem_timedwait, (sem_t *semaphore, const struct timespec *until), (semaphore, until))

__attribute__((destructor)) static void write_counts(void) {
    const char *path = getenv("COUNT_OUTPUT");
    if (!path) return;
    FILE *file = fopen(path, "w");
    if (!file) return;
    fprintf(file, "runs %ld\nframes %ld\nfirst_frames %ld\nheap %ld\nlock %ld\nlast_frame %ld\noutside %ld\n",
            atomic_load(&runs), atomic_load(&frames), atomic_load(&first_frames), atomic_load(&heap_calls),
            atomic_load(&lock_calls), atomic_load(&last_frame), atomic_load(&outside_calls));
    fclose(file);
}

#endif
