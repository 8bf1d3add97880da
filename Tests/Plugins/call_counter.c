/* Preloaded into a plugin host (LD_PRELOAD): counts the heap and lock calls made while the plugin's run() is on
 * the stack, from any library, and writes the counts to a file when the host exits.
 *
 *   COUNT_OBJECT  the end of the plugin's path (koe.so, koe-ladspa.so)
 *   COUNT_OUTPUT  where the counts go, one "name value" a line:
 *                 runs, frames      run() calls and the frames they were given
 *                 first_frames      the frames the first run() call was given
 *                 heap, lock        heap and lock calls made within run()
 *                 last_frame        frames given to run() up to the end of the last call that made one (0: none)
 *                 outside           heap calls made from the plugin's own code outside run() (instantiate, ...)
 *
 * Hosts find a plugin's descriptor with dlsym ("ladspa_descriptor", "lv2_descriptor"); this file answers such a
 * lookup in the plugin with a function that hands out copies of its descriptors whose run() is wrapped. The
 * plugin's segments are looked up after each dlopen until it is found, which is how hosts load plugins.
 * The counting itself is call_counting.h's. */
#include "call_counting.h"

#include <ladspa.h>
#include <link.h>
#include <lv2/core/lv2.h>

enum { MAX_DESCRIPTORS = 8 };

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

static const LADSPA_Descriptor *(*plugin_ladspa_descriptor)(unsigned long);
static LADSPA_Descriptor ladspa_copies[MAX_DESCRIPTORS];
static void (*ladspa_runs[MAX_DESCRIPTORS])(LADSPA_Handle, unsigned long);

#define LADSPA_RUN(index)                                                              \
    static void ladspa_run_##index(LADSPA_Handle handle, unsigned long count) {        \
        begin_run(count);                                                              \
        ladspa_runs[index](handle, count);                                             \
        end_run();                                                                     \
    }
LADSPA_RUN(0) LADSPA_RUN(1) LADSPA_RUN(2) LADSPA_RUN(3) LADSPA_RUN(4) LADSPA_RUN(5) LADSPA_RUN(6) LADSPA_RUN(7)
static void (*const ladspa_wrappers[MAX_DESCRIPTORS])(LADSPA_Handle, unsigned long) = {
    ladspa_run_0, ladspa_run_1, ladspa_run_2, ladspa_run_3, ladspa_run_4, ladspa_run_5, ladspa_run_6, ladspa_run_7};

static const LADSPA_Descriptor *wrapped_ladspa_descriptor(unsigned long index) {
    const LADSPA_Descriptor *descriptor = plugin_ladspa_descriptor(index);
    if (!descriptor || index >= MAX_DESCRIPTORS || !descriptor->run) return descriptor;
    ladspa_copies[index] = *descriptor;
    ladspa_runs[index] = descriptor->run;
    ladspa_copies[index].run = ladspa_wrappers[index];
    return &ladspa_copies[index];
}

static const LV2_Descriptor *(*plugin_lv2_descriptor)(uint32_t);
static LV2_Descriptor lv2_copies[MAX_DESCRIPTORS];
static void (*lv2_runs[MAX_DESCRIPTORS])(LV2_Handle, uint32_t);

#define LV2_RUN(index)                                                                 \
    static void lv2_run_##index(LV2_Handle handle, uint32_t count) {                   \
        begin_run(count);                                                              \
        lv2_runs[index](handle, count);                                                \
        end_run();                                                                     \
    }
LV2_RUN(0) LV2_RUN(1) LV2_RUN(2) LV2_RUN(3) LV2_RUN(4) LV2_RUN(5) LV2_RUN(6) LV2_RUN(7)
static void (*const lv2_wrappers[MAX_DESCRIPTORS])(LV2_Handle, uint32_t) = {
    lv2_run_0, lv2_run_1, lv2_run_2, lv2_run_3, lv2_run_4, lv2_run_5, lv2_run_6, lv2_run_7};

static const LV2_Descriptor *wrapped_lv2_descriptor(uint32_t index) {
    const LV2_Descriptor *descriptor = plugin_lv2_descriptor(index);
    if (!descriptor || index >= MAX_DESCRIPTORS) return descriptor;
    lv2_copies[index] = *descriptor;
    lv2_runs[index] = descriptor->run;
    lv2_copies[index].run = lv2_wrappers[index];
    return &lv2_copies[index];
}

void *dlopen(const char *file, int mode) {
    static void *(*next)(const char *, int);
    if (!next) next = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    void *handle = next(file, mode);
    const char *object = getenv("COUNT_OBJECT");
    if (object && atomic_load(&segment_count) == 0) dl_iterate_phdr(find_object, (void *)object);
    return handle;
}

void *dlsym(void *handle, const char *name) {
    static void *(*next)(void *, const char *);
    if (!next) next = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!next) next = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    void *symbol = next(handle, name);
    if (!symbol || !from_object(symbol)) return symbol;
    if (strcmp(name, "ladspa_descriptor") == 0) {
        plugin_ladspa_descriptor = (const LADSPA_Descriptor *(*)(unsigned long))symbol;
        return (void *)wrapped_ladspa_descriptor;
    }
    if (strcmp(name, "lv2_descriptor") == 0) {
        plugin_lv2_descriptor = (const LV2_Descriptor *(*)(uint32_t))symbol;
        return (void *)wrapped_lv2_descriptor;
    }
    return symbol;
}
