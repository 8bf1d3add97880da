/* Preloaded into `koe live --virtual-mic` (LD_PRELOAD): counts the heap and lock calls made within its PipeWire
 * process step, from any library, with the plugins' counting (Tests/Plugins/call_counting.h; the same
 * COUNT_OUTPUT file and names, a "run" being one process step and its frames the captured block's).
 *
 * A step lasts from a thread's first pw_stream_dequeue_buffer to the pw_stream_queue_buffer that hands back the
 * last buffer it holds: both are replaced by wrappers that mark it and forward to libpipewire, so the dequeue and
 * queue calls count as part of the step. */
#include "../Plugins/call_counting.h"

#include <pipewire/stream.h>

static __thread int buffers_held;

struct pw_buffer *pw_stream_dequeue_buffer(struct pw_stream *stream) {
    static struct pw_buffer *(*next)(struct pw_stream *);
    if (!next) next = (struct pw_buffer * (*)(struct pw_stream *)) dlsym(RTLD_NEXT, "pw_stream_dequeue_buffer");
    int starts = buffers_held == 0 && !in_run;
    if (starts) begin_run(0);
    struct pw_buffer *buffer = next(stream);
    if (!buffer) {
        if (buffers_held == 0) end_run();
        return buffer;
    }
    if (buffers_held++ == 0 && buffer->buffer->n_datas > 0 && buffer->buffer->datas[0].chunk) {
        /* The step's first buffer is the capture's: its frames are the step's. */
        long count = buffer->buffer->datas[0].chunk->size / sizeof(float);
        atomic_fetch_add(&frames, count);
        if (atomic_load(&runs) == 1) atomic_store(&first_frames, count);
    }
    return buffer;
}

int pw_stream_queue_buffer(struct pw_stream *stream, struct pw_buffer *buffer) {
    static int (*next)(struct pw_stream *, struct pw_buffer *);
    if (!next) next = (int (*)(struct pw_stream *, struct pw_buffer *))dlsym(RTLD_NEXT, "pw_stream_queue_buffer");
    int result = next(stream, buffer);
    if (buffers_held > 0 && --buffers_held == 0 && in_run) end_run();
    return result;
}
