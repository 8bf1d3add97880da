/* A virtual microphone on PipeWire: a capture stream from a source, and an `Audio/Source` node that offers what a
 * callback makes of each captured block. The streams and the server's answers live on a pw_thread_loop; the
 * callback runs on PipeWire's real-time data thread, in the capture stream's process step. */
#ifndef KOE_VIRTUAL_MICROPHONE_H
#define KOE_VIRTUAL_MICROPHONE_H

#include <stddef.h>
#include <stdint.h>

/* Called once per graph cycle on the real-time thread with the captured block (mono, 32-bit float) and where its
 * `frames` output frames go. `input` is NULL when the cycle brought no capture buffer (then `xrun` is 1 and the
 * callback should write silence). `xrun` is 1 when cycles were missed since the last cycle (on a cycle's first
 * call only: a cycle longer than the scratch room comes in pieces). */
typedef void (*koe_virtual_microphone_process)(void *user, const float *input, float *output, uint32_t frames, int xrun);

typedef struct koe_virtual_microphone koe_virtual_microphone;

/* Connects to the PipeWire server (PIPEWIRE_REMOTE, or the default), reads its nodes, the default source and the
 * graph's rate, and checks that no node is called `node_name` or described as `description` and that the capture
 * source exists: `input` names a node (node.name or node.description, exactly or its start; a sink means its
 * monitor), NULL means the default source. Waits at most `timeout_seconds` for each answer. NULL on failure, with a
 * one-line reason in `error`. */
koe_virtual_microphone *koe_virtual_microphone_connect(const char *description, const char *node_name, const char *input,
                                                       double timeout_seconds, char *error, size_t error_size);

/* The graph's sample rate (settings metadata clock.rate, or clock.force-rate when set): the rate of both streams. */
uint32_t koe_virtual_microphone_rate(const koe_virtual_microphone *microphone);

/* The node.name of the capture source. */
const char *koe_virtual_microphone_input(const koe_virtual_microphone *microphone);

/* Creates both streams and waits until the capture stream runs and the source node is in the graph. `process` is
 * called from then on. Returns 0, or -1 with a one-line reason in `error`. */
int koe_virtual_microphone_start(koe_virtual_microphone *microphone, koe_virtual_microphone_process process, void *user,
                                 char *error, size_t error_size);

/* Frames of the last cycle: the graph's quantum; 0 before the first. */
uint32_t koe_virtual_microphone_quantum(const koe_virtual_microphone *microphone);

/* 1 and a one-line reason in `error` once the connection is lost or a stream failed; 0 while all is well. */
int koe_virtual_microphone_failed(koe_virtual_microphone *microphone, char *error, size_t error_size);

/* Destroys the streams (the source leaves the graph), disconnects and frees everything; NULL is allowed. */
void koe_virtual_microphone_close(koe_virtual_microphone *microphone);

#endif
