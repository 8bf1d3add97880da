#include <librsvg/rsvg.h>
#include <cairo.h>
#include <stdlib.h>
#include <string.h>

/* The bytes of a PNG as cairo writes it, grown as it goes; free `bytes` with free(). */
typedef struct {
    unsigned char *bytes;
    size_t length;
    size_t capacity;
} koe_png_buffer;

static inline cairo_status_t koe_png_append(void *closure, const unsigned char *data, unsigned int length) {
    koe_png_buffer *buffer = closure;
    if (buffer->length + length > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity : 65536;
        while (capacity < buffer->length + length) capacity *= 2;
        unsigned char *grown = realloc(buffer->bytes, capacity);
        if (!grown) return CAIRO_STATUS_NO_MEMORY;
        buffer->bytes = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->bytes + buffer->length, data, length);
    buffer->length += length;
    return CAIRO_STATUS_SUCCESS;
}

/* Encodes `surface` as PNG into `buffer`; cairo's status. */
static inline cairo_status_t koe_png_encode(cairo_surface_t *surface, koe_png_buffer *buffer) {
    return cairo_surface_write_to_png_stream(surface, koe_png_append, buffer);
}
