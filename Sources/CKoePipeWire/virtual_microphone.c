/* The virtual microphone's PipeWire side: see virtual_microphone.h. Shaped like PipeWire's module-loopback and
 * filter-chain: a capture stream and an `Audio/Source` playback stream in one node group (so one driver runs both),
 * the capture stream's real-time process step dequeuing both buffers and handing them to the callback. */
#define _GNU_SOURCE
#include "virtual_microphone.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>
#include <spa/param/audio/format-utils.h>
#include <spa/utils/json.h>
#include <spa/utils/result.h>

/* Frames the callback can be given at once when the source node has no buffer to fill (nobody records it): the
 * largest quantum PipeWire allows. A longer cycle is processed in pieces of this size. */
enum { SCRATCH_FRAMES = 8192, NAME_SIZE = 256 };

struct node {
    uint32_t id;
    char name[NAME_SIZE], description[NAME_SIZE], media_class[64];
};

struct koe_virtual_microphone {
    struct pw_thread_loop *loop;
    struct pw_context *context;
    struct pw_core *core;
    struct spa_hook core_listener;
    struct pw_registry *registry;
    struct spa_hook registry_listener;
    struct pw_metadata *metadata[2]; /* "default", "settings" */
    struct spa_hook metadata_listener[2];
    int pending_sync, synced;
    double timeout;

    struct node *nodes;
    size_t node_count, node_capacity;
    char default_source[NAME_SIZE];
    uint32_t rate, forced_rate;

    char description[NAME_SIZE], node_name[NAME_SIZE], input[NAME_SIZE];
    uint32_t input_id;
    int input_is_sink;

    struct pw_stream *capture, *playback;
    struct spa_hook capture_listener, playback_listener;
    enum pw_stream_state capture_state, playback_state;
    char failure[512];

    koe_virtual_microphone_process process;
    void *user;
    float *scratch;
    uint64_t next_ticks;
    _Atomic uint32_t quantum;
};

static void say(char *error, size_t size, const char *format, ...) {
    if (!error || size == 0) return;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error, size, format, arguments);
    va_end(arguments);
}

static void copy_name(char *target, const char *source) {
    snprintf(target, NAME_SIZE, "%s", source ? source : "");
}

/* The main thread waits on the loop for `done` (checked under the loop's lock); 0 when it came in time. */
static int wait_for(struct koe_virtual_microphone *microphone, int (*done)(struct koe_virtual_microphone *)) {
    struct timespec deadline;
    pw_thread_loop_get_time(microphone->loop, &deadline, (int64_t)(microphone->timeout * SPA_NSEC_PER_SEC));
    while (!done(microphone)) {
        if (microphone->failure[0]) return -1;
        if (pw_thread_loop_timed_wait_full(microphone->loop, &deadline) == -ETIMEDOUT) return done(microphone) ? 0 : -1;
    }
    return 0;
}

static void on_core_done(void *data, uint32_t id, int seq) {
    struct koe_virtual_microphone *microphone = data;
    if (id == PW_ID_CORE && seq == microphone->pending_sync) {
        microphone->synced = 1;
        pw_thread_loop_signal(microphone->loop, false);
    }
}

static void on_core_error(void *data, uint32_t id, int seq, int result, const char *message) {
    (void)seq;
    struct koe_virtual_microphone *microphone = data;
    /* The first reason stays: a capture device that went away makes the server refuse what follows. */
    if (id != PW_ID_CORE || microphone->failure[0]) return;
    if (result == -EPIPE) snprintf(microphone->failure, sizeof microphone->failure, "lost the connection to PipeWire");
    else snprintf(microphone->failure, sizeof microphone->failure, "PipeWire: %s", message ? message : spa_strerror(result));
    pw_thread_loop_signal(microphone->loop, false);
}

static const struct pw_core_events core_events = {
    .version = PW_VERSION_CORE_EVENTS,
    .done = on_core_done,
    .error = on_core_error,
};

static int on_metadata_property(void *data, uint32_t subject, const char *key, const char *type, const char *value) {
    (void)type;
    struct koe_virtual_microphone *microphone = data;
    if (subject != PW_ID_CORE || !key || !value) return 0;
    if (strcmp(key, "default.audio.source") == 0) {
        /* {"name":"alsa_input..."} */
        struct spa_json iterator, object;
        char field[64], name[NAME_SIZE];
        spa_json_init(&iterator, value, strlen(value));
        if (spa_json_enter_object(&iterator, &object) <= 0) return 0;
        while (spa_json_get_string(&object, field, sizeof field) > 0) {
            if (strcmp(field, "name") == 0) {
                if (spa_json_get_string(&object, name, sizeof name) > 0) copy_name(microphone->default_source, name);
                break;
            }
            const char *skipped;
            if (spa_json_next(&object, &skipped) <= 0) break;
        }
    } else if (strcmp(key, "clock.rate") == 0) {
        microphone->rate = (uint32_t)strtoul(value, NULL, 10);
    } else if (strcmp(key, "clock.force-rate") == 0) {
        microphone->forced_rate = (uint32_t)strtoul(value, NULL, 10);
    }
    return 0;
}

static const struct pw_metadata_events metadata_events = {
    .version = PW_VERSION_METADATA_EVENTS,
    .property = on_metadata_property,
};

static void on_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                      const struct spa_dict *props) {
    (void)permissions;
    (void)version;
    struct koe_virtual_microphone *microphone = data;
    if (!props) return;
    if (strcmp(type, PW_TYPE_INTERFACE_Node) == 0) {
        if (microphone->node_count == microphone->node_capacity) {
            size_t capacity = microphone->node_capacity ? 2 * microphone->node_capacity : 64;
            struct node *nodes = realloc(microphone->nodes, capacity * sizeof *nodes);
            if (!nodes) return;
            microphone->nodes = nodes;
            microphone->node_capacity = capacity;
        }
        struct node *node = &microphone->nodes[microphone->node_count++];
        node->id = id;
        copy_name(node->name, spa_dict_lookup(props, PW_KEY_NODE_NAME));
        copy_name(node->description, spa_dict_lookup(props, PW_KEY_NODE_DESCRIPTION));
        snprintf(node->media_class, sizeof node->media_class, "%s",
                 spa_dict_lookup(props, PW_KEY_MEDIA_CLASS) ? spa_dict_lookup(props, PW_KEY_MEDIA_CLASS) : "");
    } else if (strcmp(type, PW_TYPE_INTERFACE_Metadata) == 0) {
        const char *name = spa_dict_lookup(props, PW_KEY_METADATA_NAME);
        int slot = !name ? -1 : strcmp(name, "default") == 0 ? 0 : strcmp(name, "settings") == 0 ? 1 : -1;
        if (slot < 0 || microphone->metadata[slot]) return;
        microphone->metadata[slot] = pw_registry_bind(microphone->registry, id, PW_TYPE_INTERFACE_Metadata,
                                                      PW_VERSION_METADATA, 0);
        if (microphone->metadata[slot])
            pw_metadata_add_listener(microphone->metadata[slot], &microphone->metadata_listener[slot], &metadata_events,
                                     microphone);
    }
}

static void on_global_remove(void *data, uint32_t id) {
    struct koe_virtual_microphone *microphone = data;
    if (!microphone->input[0] || id != microphone->input_id || microphone->failure[0]) return;
    snprintf(microphone->failure, sizeof microphone->failure, "the capture device '%s' went away", microphone->input);
    pw_thread_loop_signal(microphone->loop, false);
}

static const struct pw_registry_events registry_events = {
    .version = PW_VERSION_REGISTRY_EVENTS,
    .global = on_global,
    .global_remove = on_global_remove,
};

static int is_synced(struct koe_virtual_microphone *microphone) { return microphone->synced; }

/* A round trip: every event the server sent before it has been handled. */
static int round_trip(struct koe_virtual_microphone *microphone) {
    microphone->synced = 0;
    microphone->pending_sync = pw_core_sync(microphone->core, PW_ID_CORE, microphone->pending_sync);
    return wait_for(microphone, is_synced);
}

static int is_capture_class(const char *media_class) {
    return strcmp(media_class, "Audio/Source") == 0 || strcmp(media_class, "Audio/Source/Virtual") == 0 ||
           strcmp(media_class, "Audio/Duplex") == 0 || strcmp(media_class, "Audio/Sink") == 0;
}

/* The capture node `name` names: node.name or description, exactly first, then as the start of one. */
static const struct node *find_capture_node(const struct koe_virtual_microphone *microphone, const char *name) {
    for (int prefix = 0; prefix < 2; ++prefix) {
        for (size_t i = 0; i < microphone->node_count; ++i) {
            const struct node *node = &microphone->nodes[i];
            if (!is_capture_class(node->media_class)) continue;
            int matches = prefix ? strncmp(node->name, name, strlen(name)) == 0 ||
                                       strncmp(node->description, name, strlen(name)) == 0
                                 : strcmp(node->name, name) == 0 || strcmp(node->description, name) == 0;
            if (matches) return node;
        }
    }
    return NULL;
}

/* Signals go to the main thread only: PipeWire's threads inherit this mask. */
static void block_signals(sigset_t *saved) {
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGINT);
    sigaddset(&blocked, SIGTERM);
    sigaddset(&blocked, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &blocked, saved);
}

koe_virtual_microphone *koe_virtual_microphone_connect(const char *description, const char *node_name, const char *input,
                                                       double timeout_seconds, char *error, size_t error_size) {
    pw_init(NULL, NULL);
    struct koe_virtual_microphone *microphone = calloc(1, sizeof *microphone);
    if (!microphone) {
        say(error, error_size, "out of memory");
        return NULL;
    }
    microphone->timeout = timeout_seconds;
    copy_name(microphone->description, description);
    copy_name(microphone->node_name, node_name);
    sigset_t saved;
    block_signals(&saved);
    microphone->loop = pw_thread_loop_new("koe-pipewire", NULL);
    microphone->context = microphone->loop
        /* client-rt.conf loads module-rt: the data thread, where the voice is changed, runs at real-time
         * priority where the system allows it, as the PipeWire daemons' own do. */
        ? pw_context_new(pw_thread_loop_get_loop(microphone->loop),
                         pw_properties_new(PW_KEY_APP_NAME, "koe", PW_KEY_CONFIG_NAME, "client-rt.conf", NULL), 0)
        : NULL;
    if (!microphone->context || pw_thread_loop_start(microphone->loop) < 0) {
        pthread_sigmask(SIG_SETMASK, &saved, NULL);
        say(error, error_size, "cannot start PipeWire's client loop");
        koe_virtual_microphone_close(microphone);
        return NULL;
    }
    pthread_sigmask(SIG_SETMASK, &saved, NULL);

    pw_thread_loop_lock(microphone->loop);
    int status = -1;
    microphone->core = pw_context_connect(microphone->context, NULL, 0);
    if (!microphone->core) {
        say(error, error_size, "no PipeWire server: cannot connect (%s)", strerror(errno));
        goto done;
    }
    pw_core_add_listener(microphone->core, &microphone->core_listener, &core_events, microphone);
    microphone->registry = pw_core_get_registry(microphone->core, PW_VERSION_REGISTRY, 0);
    pw_registry_add_listener(microphone->registry, &microphone->registry_listener, &registry_events, microphone);
    /* The first round trip lists the globals (and binds the metadata), the second brings the metadata's values. */
    if (round_trip(microphone) < 0 || round_trip(microphone) < 0) {
        say(error, error_size, "%s", microphone->failure[0] ? microphone->failure
                                                           : "the PipeWire server did not answer in time");
        goto done;
    }
    for (size_t i = 0; i < microphone->node_count; ++i) {
        const struct node *node = &microphone->nodes[i];
        if (strcmp(node->name, node_name) == 0 || strcmp(node->description, description) == 0) {
            say(error, error_size, "a PipeWire node is already called '%s' (node %u, %s)", description, node->id,
                node->name);
            goto done;
        }
    }
    const struct node *source = NULL;
    if (input) {
        if (!(source = find_capture_node(microphone, input))) {
            say(error, error_size, "no PipeWire capture device named '%s' (see pactl list short sources)", input);
            goto done;
        }
    } else if (!microphone->default_source[0] || !(source = find_capture_node(microphone, microphone->default_source))) {
        say(error, error_size, "no capture device: PipeWire has no default source");
        goto done;
    }
    copy_name(microphone->input, source->name);
    microphone->input_id = source->id;
    microphone->input_is_sink = strcmp(source->media_class, "Audio/Sink") == 0;
    if (microphone->forced_rate) microphone->rate = microphone->forced_rate;
    if (microphone->rate == 0) {
        say(error, error_size, "PipeWire did not say the graph's rate (no clock.rate in its settings metadata)");
        goto done;
    }
    status = 0;
done:
    pw_thread_loop_unlock(microphone->loop);
    if (status < 0) {
        koe_virtual_microphone_close(microphone);
        return NULL;
    }
    return microphone;
}

uint32_t koe_virtual_microphone_rate(const koe_virtual_microphone *microphone) { return microphone->rate; }

const char *koe_virtual_microphone_input(const koe_virtual_microphone *microphone) { return microphone->input; }

static void on_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *message,
                             int playback) {
    (void)old;
    struct koe_virtual_microphone *microphone = data;
    if (playback) microphone->playback_state = state;
    else microphone->capture_state = state;
    if (state == PW_STREAM_STATE_ERROR && !microphone->failure[0])
        snprintf(microphone->failure, sizeof microphone->failure, "the %s stream failed: %s",
                 playback ? "source" : "capture", message ? message : "unknown error");
    pw_thread_loop_signal(microphone->loop, false);
}

static void on_capture_state(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *message) {
    on_state_changed(data, old, state, message, 0);
}

static void on_playback_state(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *message) {
    on_state_changed(data, old, state, message, 1);
}

/* The real-time step: no allocation, lock or wait here (the callback's own promise is VoiceChanger's). */
static void on_capture_process(void *data) {
    struct koe_virtual_microphone *microphone = data;
    struct pw_buffer *in = pw_stream_dequeue_buffer(microphone->capture);
    struct pw_buffer *out = pw_stream_dequeue_buffer(microphone->playback);
    const float *input = NULL;
    uint32_t frames = 0;
    if (in && in->buffer->n_datas > 0 && in->buffer->datas[0].data && in->buffer->datas[0].chunk) {
        struct spa_data *d = &in->buffer->datas[0];
        uint32_t offset = SPA_MIN(d->chunk->offset, d->maxsize);
        frames = SPA_MIN(d->chunk->size, d->maxsize - offset) / sizeof(float);
        input = SPA_PTROFF(d->data, offset, const float);
    }
    float *output = NULL;
    uint32_t room = 0;
    if (out && out->buffer->n_datas > 0 && out->buffer->datas[0].data) {
        output = out->buffer->datas[0].data;
        room = out->buffer->datas[0].maxsize / sizeof(float);
    }
    if (!input) frames = out ? (uint32_t)SPA_MIN(out->requested ? out->requested : room, room) : 0;

    /* A cycle is missed when the graph's clock moved past the frames this stream last read. A clock that does not
     * move on is a new driver (pw_stream carries its ticks over from the old one), not a loss. */
    struct pw_time time;
    int missed = !input;
    if (pw_stream_get_time_n(microphone->capture, &time, sizeof time) == 0) {
        if (microphone->next_ticks && time.ticks > microphone->next_ticks) missed = 1;
        microphone->next_ticks = time.ticks + frames;
    }
    atomic_store_explicit(&microphone->quantum, frames, memory_order_relaxed);

    /* Where nobody records the source there is no output buffer: the block still goes through, into scratch, so
     * the voice keeps time with the input. */
    uint32_t written = 0;
    while (written < frames) {
        uint32_t piece = frames - written;
        float *target;
        if (output && written + piece <= room) target = output + written;
        else {
            piece = SPA_MIN(piece, (uint32_t)SCRATCH_FRAMES);
            target = microphone->scratch;
        }
        microphone->process(microphone->user, input ? input + written : NULL, target, piece, missed && written == 0);
        if (target == microphone->scratch && output && written < room)
            memcpy(output + written, target, SPA_MIN(piece, room - written) * sizeof(float));
        written += piece;
    }
    if (out) {
        if (output) {
            struct spa_chunk *chunk = out->buffer->datas[0].chunk;
            chunk->offset = 0;
            chunk->stride = sizeof(float);
            chunk->size = SPA_MIN(frames, room) * sizeof(float);
        }
        pw_stream_queue_buffer(microphone->playback, out);
    }
    if (in) pw_stream_queue_buffer(microphone->capture, in);
}

static const struct pw_stream_events capture_events = {
    .version = PW_VERSION_STREAM_EVENTS,
    .state_changed = on_capture_state,
    .process = on_capture_process,
};

static const struct pw_stream_events playback_events = {
    .version = PW_VERSION_STREAM_EVENTS,
    .state_changed = on_playback_state,
};

static int is_running(struct koe_virtual_microphone *microphone) {
    return microphone->capture_state == PW_STREAM_STATE_STREAMING &&
           microphone->playback_state >= PW_STREAM_STATE_PAUSED;
}

int koe_virtual_microphone_start(koe_virtual_microphone *microphone, koe_virtual_microphone_process process, void *user,
                                 char *error, size_t error_size) {
    microphone->process = process;
    microphone->user = user;
    microphone->scratch = calloc(SCRATCH_FRAMES, sizeof(float));
    if (!microphone->scratch) {
        say(error, error_size, "out of memory");
        return -1;
    }
    char group[64], capture_name[NAME_SIZE + 16], capture_description[NAME_SIZE + 16], rate[32];
    snprintf(group, sizeof group, "koe-virtual-mic-%d", (int)getpid());
    snprintf(capture_name, sizeof capture_name, "%s.capture", microphone->node_name);
    snprintf(capture_description, sizeof capture_description, "%s (capture)", microphone->description);
    snprintf(rate, sizeof rate, "1/%u", microphone->rate);

    sigset_t saved;
    block_signals(&saved);
    pw_thread_loop_lock(microphone->loop);
    int status = -1;
    struct pw_properties *capture_props = pw_properties_new(
        PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Capture", PW_KEY_MEDIA_ROLE, "Communication",
        PW_KEY_NODE_NAME, capture_name, PW_KEY_NODE_DESCRIPTION, capture_description, PW_KEY_MEDIA_NAME,
        capture_description, PW_KEY_NODE_GROUP, group, PW_KEY_NODE_RATE, rate, PW_KEY_TARGET_OBJECT,
        microphone->input, PW_KEY_NODE_DONT_RECONNECT, "true", NULL);
    if (microphone->input_is_sink) pw_properties_set(capture_props, PW_KEY_STREAM_CAPTURE_SINK, "true");
    struct pw_properties *playback_props = pw_properties_new(
        PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CLASS, "Audio/Source", PW_KEY_NODE_NAME, microphone->node_name,
        PW_KEY_NODE_DESCRIPTION, microphone->description, PW_KEY_MEDIA_NAME, microphone->description,
        PW_KEY_NODE_GROUP, group, PW_KEY_NODE_RATE, rate, NULL);
    microphone->capture = pw_stream_new(microphone->core, capture_description, capture_props);
    microphone->playback = pw_stream_new(microphone->core, microphone->description, playback_props);
    if (!microphone->capture || !microphone->playback) {
        say(error, error_size, "cannot create the PipeWire streams (%s)", strerror(errno));
        goto done;
    }
    pw_stream_add_listener(microphone->capture, &microphone->capture_listener, &capture_events, microphone);
    pw_stream_add_listener(microphone->playback, &microphone->playback_listener, &playback_events, microphone);

    uint8_t buffer[1024];
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, sizeof buffer);
    struct spa_audio_info_raw info = {
        .format = SPA_AUDIO_FORMAT_F32, .rate = microphone->rate, .channels = 1, .position = {SPA_AUDIO_CHANNEL_MONO}};
    const struct spa_pod *params[1] = {spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &info)};
    enum pw_stream_flags flags = PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS;
    if (pw_stream_connect(microphone->playback, PW_DIRECTION_OUTPUT, PW_ID_ANY, flags, params, 1) < 0 ||
        pw_stream_connect(microphone->capture, PW_DIRECTION_INPUT, PW_ID_ANY, flags, params, 1) < 0) {
        say(error, error_size, "cannot connect the PipeWire streams (%s)", strerror(errno));
        goto done;
    }
    if (wait_for(microphone, is_running) < 0) {
        if (microphone->failure[0]) say(error, error_size, "%s", microphone->failure);
        else if (microphone->capture_state != PW_STREAM_STATE_STREAMING)
            say(error, error_size, "the capture device '%s' did not start within %g s", microphone->input,
                microphone->timeout);
        else say(error, error_size, "the source node did not appear within %g s", microphone->timeout);
        goto done;
    }
    status = 0;
done:
    pw_thread_loop_unlock(microphone->loop);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    return status;
}

uint32_t koe_virtual_microphone_quantum(const koe_virtual_microphone *microphone) {
    return atomic_load_explicit(&microphone->quantum, memory_order_relaxed);
}

int koe_virtual_microphone_failed(koe_virtual_microphone *microphone, char *error, size_t error_size) {
    pw_thread_loop_lock(microphone->loop);
    int failed = microphone->failure[0] != 0;
    if (failed) say(error, error_size, "%s", microphone->failure);
    pw_thread_loop_unlock(microphone->loop);
    return failed;
}

void koe_virtual_microphone_close(koe_virtual_microphone *microphone) {
    if (!microphone) return;
    if (microphone->loop) {
        pw_thread_loop_lock(microphone->loop);
        if (microphone->capture) pw_stream_destroy(microphone->capture);
        if (microphone->playback) pw_stream_destroy(microphone->playback);
        for (int slot = 0; slot < 2; ++slot)
            if (microphone->metadata[slot]) pw_proxy_destroy((struct pw_proxy *)microphone->metadata[slot]);
        if (microphone->registry) pw_proxy_destroy((struct pw_proxy *)microphone->registry);
        if (microphone->core) pw_core_disconnect(microphone->core);
        pw_thread_loop_unlock(microphone->loop);
        pw_thread_loop_stop(microphone->loop);
    }
    if (microphone->context) pw_context_destroy(microphone->context);
    if (microphone->loop) pw_thread_loop_destroy(microphone->loop);
    free(microphone->nodes);
    free(microphone->scratch);
    free(microphone);
}
