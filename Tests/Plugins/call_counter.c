/* Preloaded into a plugin host (LD_PRELOAD): counts the heap and lock calls made from one shared object, the
 * plugin, and writes the counts to a file when the host exits. The test runs a host on a short input and on a
 * longer one: equal counts mean run() neither allocates nor locks once warm, however often the host calls it.
 *
 *   COUNT_OBJECT  the end of the plugin's path (koe.so, koe-ladspa.so)
 *   COUNT_OUTPUT  where the counts go: "heap N\nlock N\n"
 *
 * A call is the plugin's when its return address lies in the plugin's mapped segments; the segments are looked
 * up after every dlopen, which is how hosts load plugins. Allocation goes to glibc's own entry points, so this
 * file never calls the functions it replaces. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
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
static atomic_long heap_calls, lock_calls;

static int find_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    const char *suffix = data;
    size_t name_length = strlen(info->dlpi_name), suffix_length = strlen(suffix);
    if (name_length < suffix_length || strcmp(info->dlpi_name + name_length - suffix_length, suffix) != 0) return 0;
    int count = 0;
    for (int i = 0; i < info->dlpi_phnum && count < MAX_SEGMENTS; ++i) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[i];
        if (header->p_type != PT_LOAD) continue;
        segments[count].start = info->dlpi_addr + header->p_vaddr;
        segments[count].end = segments[count].start + header->p_memsz;
        ++count;
    }
    atomic_store(&segment_count, count);
    return 1;
}

static int from_object(void *return_address) {
    uintptr_t address = (uintptr_t)return_address;
    int count = atomic_load(&segment_count);
    for (int i = 0; i < count; ++i) {
        if (address >= segments[i].start && address < segments[i].end) return 1;
    }
    return 0;
}

#define COUNT(counter) do { if (from_object(__builtin_return_address(0))) atomic_fetch_add(&counter, 1); } while (0)

void *dlopen(const char *file, int mode) {
    static void *(*next)(const char *, int);
    if (!next) next = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    void *handle = next(file, mode);
    const char *object = getenv("COUNT_OBJECT");
    if (object && atomic_load(&segment_count) == 0) dl_iterate_phdr(find_object, (void *)object);
    return handle;
}

void *malloc(size_t size) { COUNT(heap_calls); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { COUNT(heap_calls); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { COUNT(heap_calls); return __libc_realloc(pointer, size); }
void free(void *pointer) { if (pointer) COUNT(heap_calls); __libc_free(pointer); }

int posix_memalign(void **pointer, size_t alignment, size_t size) {
    COUNT(heap_calls);
    *pointer = __libc_memalign(alignment, size);
    return *pointer ? 0 : 12; /* ENOMEM */
}

void *aligned_alloc(size_t alignment, size_t size) { COUNT(heap_calls); return __libc_memalign(alignment, size); }
void *memalign(size_t alignment, size_t size) { COUNT(heap_calls); return __libc_memalign(alignment, size); }

/* C++ operator new and delete (the Swift runtime's C++ parts call libstdc++'s, which then call malloc from
 * libstdc++, not from the plugin), and FFTW's allocator, which calls posix_memalign from libfftw3. */
void *_Znwm(size_t size) { COUNT(heap_calls); return __libc_malloc(size); }
void *_Znam(size_t size) { COUNT(heap_calls); return __libc_malloc(size); }
void _ZdlPv(void *pointer) { COUNT(heap_calls); __libc_free(pointer); }
void _ZdlPvm(void *pointer, size_t size) { (void)size; COUNT(heap_calls); __libc_free(pointer); }
void _ZdaPv(void *pointer) { COUNT(heap_calls); __libc_free(pointer); }
void *fftw_malloc(size_t size) { COUNT(heap_calls); return __libc_memalign(64, size); }
void fftw_free(void *pointer) { COUNT(heap_calls); __libc_free(pointer); }

/* Each lock entry point forwards to the next definition, found once. */
#define FORWARD_LOCK(name, parameters, arguments)                                     \
    int name parameters {                                                             \
        static int (*next) parameters;                                                \
        if (!next) next = (int (*) parameters)dlsym(RTLD_NEXT, #name);                \
        COUNT(lock_calls);                                                            \
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
    fprintf(file, "heap %ld\nlock %ld\n", atomic_load(&heap_calls), atomic_load(&lock_calls));
    fclose(file);
}
