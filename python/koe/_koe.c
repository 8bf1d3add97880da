/* koe._koe_LEVEL: the CPython extension over koe's C ABI (koe.h, koe_world.h).
 *
 * setup.py compiles it once per x86-64 level the wheel serves, naming each module by KOE_EXTENSION
 * (_koe_x86_64, _koe_x86_64_v3); python/koe/_native.py imports the one the CPU runs.
 *
 * A thin shell: the Python package (koe/world.py, koe/__init__.py) checks arguments, sizes and allocates the
 * numpy arrays; each function here takes them through the buffer protocol (C-contiguous float64, or float32
 * for the changer's audio), so no numpy C API is compiled in and one build serves numpy 1.x and 2.x. The GIL is
 * released around every call into koe. Errors: ValueError, or OSError for a file, with koe's message.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>

#include "koe.h"
#include "koe_world.h"

#ifndef KOE_EXTENSION
#error "KOE_EXTENSION names the module (setup.py defines it)"
#endif
/* Two levels of expansion, so that KOE_EXTENSION's value is pasted and quoted, not its name. */
#define PASTE(a, b) a##b
#define MODULE_INIT(name) PASTE(PyInit_, name)
#define QUOTE(name) #name
#define MODULE_NAME(name) "koe." QUOTE(name)

#define MESSAGE_SIZE 1024

/* Raises the exception a koe status calls for, with koe's message when there is one. */
static PyObject *raise_status(int status, const char *message) {
    PyObject *type = status == KOE_ERROR_IO ? PyExc_OSError : PyExc_ValueError;
    PyErr_SetString(type, message && message[0] ? message : koe_status_string(status));
    return NULL;
}

/* A buffer of C-contiguous values of one format ('d' float64, 'f' float32), writable when asked. */
typedef struct {
    Py_buffer view;
    int held;
} Values;

static int get_values(PyObject *object, Values *values, char format, int writable, const char *name) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    values->held = 0;
    if (PyObject_GetBuffer(object, &values->view, flags) != 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous %s array", name, format == 'd' ? "float64" : "float32");
        return -1;
    }
    values->held = 1;
    const char *actual = values->view.format ? values->view.format : "B";
    if (actual[0] == '<' || actual[0] == '=' || actual[0] == '@') actual++;
    Py_ssize_t size = format == 'd' ? (Py_ssize_t)sizeof(double) : (Py_ssize_t)sizeof(float);
    if (actual[0] != format || actual[1] != '\0' || values->view.itemsize != size) {
        PyErr_Format(PyExc_TypeError, "%s must hold %s values (got format '%s')", name,
                     format == 'd' ? "float64" : "float32", values->view.format ? values->view.format : "B");
        PyBuffer_Release(&values->view);
        values->held = 0;
        return -1;
    }
    return 0;
}

static void release(Values *values) {
    if (values->held) PyBuffer_Release(&values->view);
    values->held = 0;
}

static Py_ssize_t count(const Values *values) { return values->view.len / values->view.itemsize; }
static double *doubles(const Values *values) { return (double *)values->view.buf; }

/* Fails unless `values` holds exactly `expected` values. */
static int require_count(const Values *values, Py_ssize_t expected, const char *name) {
    if (count(values) == expected) return 0;
    PyErr_Format(PyExc_ValueError, "%s has %zd values, %zd expected", name, count(values), expected);
    return -1;
}

/* ---- WORLD ---- */

/* A WORLD sizing helper of koe_world.h: (fs, frame_period, count) -> a length. */
typedef int (*sizing_helper)(int fs, double frame_period, long count, long *length, char *message, size_t message_size);

static PyObject *size_with(PyObject *args, sizing_helper helper) {
    int fs;
    double frame_period;
    Py_ssize_t count;
    if (!PyArg_ParseTuple(args, "idn", &fs, &frame_period, &count)) return NULL;
    long length = 0;
    char message[MESSAGE_SIZE] = "";
    int status = helper(fs, frame_period, count, &length, message, sizeof message);
    if (status != KOE_OK) return raise_status(status, message);
    return PyLong_FromLong(length);
}

static PyObject *frame_count(PyObject *self, PyObject *args) { return size_with(args, koe_world_frame_count); }

/* dio(x, fs, f0_floor, f0_ceil, channels_in_octave, frame_period, speed, allowed_range, f0_out, time_out) and
 * harvest(x, fs, f0_floor, f0_ceil, frame_period, f0_out, time_out): one shape, the F0 and the time axis of a signal;
 * DIO's own options, or NULL for Harvest. */
typedef struct {
    double channels_in_octave, allowed_range;
    int speed;
} DioOptions;

static PyObject *estimate_f0(PyObject *x_object, int fs, double f0_floor, double f0_ceil, double frame_period,
                             const DioOptions *dio, PyObject *f0_object, PyObject *time_object) {
    Values x, f0, time;
    if (get_values(x_object, &x, 'd', 0, "x") != 0) return NULL;
    if (get_values(f0_object, &f0, 'd', 1, "f0") != 0) { release(&x); return NULL; }
    if (get_values(time_object, &time, 'd', 1, "time") != 0 || require_count(&time, count(&f0), "time") != 0) {
        release(&x); release(&f0); release(&time); return NULL;
    }
    char message[MESSAGE_SIZE] = "";
    int status;
    Py_BEGIN_ALLOW_THREADS
    if (dio)
        status = koe_world_dio(doubles(&x), count(&x), fs, f0_floor, f0_ceil, dio->channels_in_octave, frame_period,
                               dio->speed, dio->allowed_range, doubles(&f0), doubles(&time), count(&f0), message,
                               sizeof message);
    else
        status = koe_world_harvest(doubles(&x), count(&x), fs, f0_floor, f0_ceil, frame_period, doubles(&f0),
                                   doubles(&time), count(&f0), message, sizeof message);
    Py_END_ALLOW_THREADS
    release(&x); release(&f0); release(&time);
    if (status != KOE_OK) return raise_status(status, message);
    Py_RETURN_NONE;
}

static PyObject *dio(PyObject *self, PyObject *args) {
    PyObject *x, *f0, *time;
    int fs;
    double f0_floor, f0_ceil, frame_period;
    DioOptions options;
    if (!PyArg_ParseTuple(args, "OiddddidOO", &x, &fs, &f0_floor, &f0_ceil, &options.channels_in_octave,
                          &frame_period, &options.speed, &options.allowed_range, &f0, &time))
        return NULL;
    return estimate_f0(x, fs, f0_floor, f0_ceil, frame_period, &options, f0, time);
}

static PyObject *harvest(PyObject *self, PyObject *args) {
    PyObject *x, *f0, *time;
    int fs;
    double f0_floor, f0_ceil, frame_period;
    if (!PyArg_ParseTuple(args, "OidddOO", &x, &fs, &f0_floor, &f0_ceil, &frame_period, &f0, &time)) return NULL;
    return estimate_f0(x, fs, f0_floor, f0_ceil, frame_period, NULL, f0, time);
}

/* The signal, the F0 and the time axis every per-frame estimator reads, and its output buffer. */
typedef struct {
    Values x, f0, time, output;
} FrameInputs;

static int get_frame_inputs(PyObject *x, PyObject *f0, PyObject *time, PyObject *output, FrameInputs *inputs) {
    inputs->x.held = inputs->f0.held = inputs->time.held = inputs->output.held = 0;
    if (get_values(x, &inputs->x, 'd', 0, "x") != 0 || get_values(f0, &inputs->f0, 'd', 0, "f0") != 0
        || get_values(time, &inputs->time, 'd', 0, "temporal_positions") != 0
        || get_values(output, &inputs->output, 'd', 1, "output") != 0
        || require_count(&inputs->time, count(&inputs->f0), "temporal_positions") != 0)
        return -1;
    return 0;
}

static void release_frame_inputs(FrameInputs *inputs) {
    release(&inputs->x); release(&inputs->f0); release(&inputs->time); release(&inputs->output);
}

/* stonemask(x, fs, time, f0, refined_out) */
static PyObject *stonemask(PyObject *self, PyObject *args) {
    PyObject *x, *time, *f0, *output;
    int fs;
    if (!PyArg_ParseTuple(args, "OiOOO", &x, &fs, &time, &f0, &output)) return NULL;
    FrameInputs in;
    if (get_frame_inputs(x, f0, time, output, &in) != 0 || require_count(&in.output, count(&in.f0), "output") != 0) {
        release_frame_inputs(&in); return NULL;
    }
    char message[MESSAGE_SIZE] = "";
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = koe_world_stonemask(doubles(&in.x), count(&in.x), fs, doubles(&in.time), doubles(&in.f0), count(&in.f0),
                                 doubles(&in.output), message, sizeof message);
    Py_END_ALLOW_THREADS
    release_frame_inputs(&in);
    if (status != KOE_OK) return raise_status(status, message);
    Py_RETURN_NONE;
}

static PyObject *cheaptrick_fft_size(PyObject *self, PyObject *args) {
    int fs, fft_size = 0;
    double f0_floor;
    if (!PyArg_ParseTuple(args, "id", &fs, &f0_floor)) return NULL;
    char message[MESSAGE_SIZE] = "";
    int status = koe_world_cheaptrick_fft_size(fs, f0_floor, &fft_size, message, sizeof message);
    if (status != KOE_OK) return raise_status(status, message);
    return PyLong_FromLong(fft_size);
}

static PyObject *cheaptrick_f0_floor(PyObject *self, PyObject *args) {
    int fs, fft_size;
    double f0_floor = 0;
    if (!PyArg_ParseTuple(args, "ii", &fs, &fft_size)) return NULL;
    char message[MESSAGE_SIZE] = "";
    int status = koe_world_cheaptrick_f0_floor(fs, fft_size, &f0_floor, message, sizeof message);
    if (status != KOE_OK) return raise_status(status, message);
    return PyFloat_FromDouble(f0_floor);
}

/* cheaptrick(x, fs, time, f0, q1, fft_size, threads, sp_out) and d4c(x, fs, time, f0, threshold, fft_size,
 * threads, ap_out): one shape, the frames times fft_size / 2 + 1 bins. */
typedef int (*FrameEstimator)(const double *, long, int, const double *, const double *, long, double, int, int,
                              double *, char *, size_t);

static PyObject *estimate_frames(PyObject *args, FrameEstimator estimator) {
    PyObject *x, *time, *f0, *output;
    int fs, fft_size, threads;
    double parameter;
    if (!PyArg_ParseTuple(args, "OiOOdiiO", &x, &fs, &time, &f0, &parameter, &fft_size, &threads, &output)) return NULL;
    FrameInputs in;
    if (get_frame_inputs(x, f0, time, output, &in) != 0) { release_frame_inputs(&in); return NULL; }
    char message[MESSAGE_SIZE] = "";
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = estimator(doubles(&in.x), count(&in.x), fs, doubles(&in.time), doubles(&in.f0), count(&in.f0), parameter,
                       fft_size, threads, doubles(&in.output), message, sizeof message);
    Py_END_ALLOW_THREADS
    release_frame_inputs(&in);
    if (status != KOE_OK) return raise_status(status, message);
    Py_RETURN_NONE;
}

static PyObject *cheaptrick(PyObject *self, PyObject *args) { return estimate_frames(args, koe_world_cheaptrick); }
static PyObject *d4c(PyObject *self, PyObject *args) { return estimate_frames(args, koe_world_d4c); }

static PyObject *synthesis_length(PyObject *self, PyObject *args) { return size_with(args, koe_world_synthesis_length); }

/* synthesize(f0, sp, ap, bins, fs, frame_period, y_out) */
static PyObject *synthesize(PyObject *self, PyObject *args) {
    PyObject *f0_object, *sp_object, *ap_object, *y_object;
    Py_ssize_t bins;
    int fs;
    double frame_period;
    if (!PyArg_ParseTuple(args, "OOOnidO", &f0_object, &sp_object, &ap_object, &bins, &fs, &frame_period, &y_object))
        return NULL;
    Values f0 = {.held = 0}, sp = {.held = 0}, ap = {.held = 0}, y = {.held = 0};
    if (get_values(f0_object, &f0, 'd', 0, "f0") != 0 || get_values(sp_object, &sp, 'd', 0, "spectrogram") != 0
        || get_values(ap_object, &ap, 'd', 0, "aperiodicity") != 0 || get_values(y_object, &y, 'd', 1, "y") != 0
        || require_count(&sp, count(&f0) * bins, "spectrogram") != 0 || require_count(&ap, count(&sp), "aperiodicity") != 0) {
        release(&f0); release(&sp); release(&ap); release(&y);
        return NULL;
    }
    char message[MESSAGE_SIZE] = "";
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = koe_world_synthesize(doubles(&f0), count(&f0), doubles(&sp), doubles(&ap), bins, fs, frame_period,
                                  doubles(&y), count(&y), message, sizeof message);
    Py_END_ALLOW_THREADS
    release(&f0); release(&sp); release(&ap); release(&y);
    if (status != KOE_OK) return raise_status(status, message);
    Py_RETURN_NONE;
}

/* ---- the codecs ---- */

static PyObject *aperiodicity_band_count(PyObject *self, PyObject *args) {
    int fs, bands = 0;
    if (!PyArg_ParseTuple(args, "i", &fs)) return NULL;
    char message[MESSAGE_SIZE] = "";
    int status = koe_world_aperiodicity_band_count(fs, &bands, message, sizeof message);
    if (status != KOE_OK) return raise_status(status, message);
    return PyLong_FromLong(bands);
}

/* One codec call: input and output row-major float64, `frames` rows each; `columns_in` and `columns_out` the
 * caller's, checked against the buffers' sizes. */
typedef enum { CODE_APERIODICITY, DECODE_APERIODICITY, CODE_ENVELOPE, DECODE_ENVELOPE } Codec;

static PyObject *run_codec(PyObject *args, Codec codec) {
    PyObject *input_object, *output_object;
    Py_ssize_t frames, columns_in, columns_out;
    int fs, fft_size, dimensions;
    if (!PyArg_ParseTuple(args, "OnnniiiO", &input_object, &frames, &columns_in, &columns_out, &fs, &fft_size,
                          &dimensions, &output_object))
        return NULL;
    Values input, output = {.held = 0};
    if (get_values(input_object, &input, 'd', 0, "input") != 0) return NULL;
    if (get_values(output_object, &output, 'd', 1, "output") != 0 || require_count(&input, frames * columns_in, "input") != 0
        || require_count(&output, frames * columns_out, "output") != 0) {
        release(&input); release(&output); return NULL;
    }
    char message[MESSAGE_SIZE] = "";
    int status = KOE_ERROR_ARGUMENT;
    double *in = doubles(&input), *out = doubles(&output);
    Py_BEGIN_ALLOW_THREADS
    switch (codec) {
    case CODE_APERIODICITY: status = koe_world_code_aperiodicity(in, frames, fs, fft_size, out, message, sizeof message); break;
    case DECODE_APERIODICITY: status = koe_world_decode_aperiodicity(in, frames, fs, fft_size, out, message, sizeof message); break;
    case CODE_ENVELOPE:
        status = koe_world_code_spectral_envelope(in, frames, fs, fft_size, dimensions, out, message, sizeof message);
        break;
    case DECODE_ENVELOPE:
        status = koe_world_decode_spectral_envelope(in, frames, fs, fft_size, dimensions, out, message, sizeof message);
        break;
    }
    Py_END_ALLOW_THREADS
    release(&input); release(&output);
    if (status != KOE_OK) return raise_status(status, message);
    Py_RETURN_NONE;
}

/* Each (input, frames, columns_in, columns_out, fs, fft_size, dimensions, output). */
static PyObject *code_aperiodicity(PyObject *self, PyObject *args) { return run_codec(args, CODE_APERIODICITY); }
static PyObject *decode_aperiodicity(PyObject *self, PyObject *args) { return run_codec(args, DECODE_APERIODICITY); }
static PyObject *code_spectral_envelope(PyObject *self, PyObject *args) { return run_codec(args, CODE_ENVELOPE); }
static PyObject *decode_spectral_envelope(PyObject *self, PyObject *args) { return run_codec(args, DECODE_ENVELOPE); }

/* ---- koe profile ---- */

/* profile(x, fs) -> (f0_median_hz, f0_spread_semitones, vocal_tract_length_cm, voiced_seconds) */
static PyObject *profile(PyObject *self, PyObject *args) {
    PyObject *x_object;
    int fs;
    if (!PyArg_ParseTuple(args, "Oi", &x_object, &fs)) return NULL;
    Values x;
    if (get_values(x_object, &x, 'd', 0, "x") != 0) return NULL;
    koe_profile_result result;
    char message[MESSAGE_SIZE] = "";
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = koe_profile(doubles(&x), (long)count(&x), fs, &result, message, sizeof message);
    Py_END_ALLOW_THREADS
    release(&x);
    if (status != KOE_OK) return raise_status(status, message);
    return Py_BuildValue("(dddd)", result.f0_median_hz, result.f0_spread_semitones, result.vocal_tract_length_cm,
                         result.voiced_seconds);
}

/* ---- koe convert ---- */

/* convert(input, output, names, values): names and values are lists of str of one length. */
static PyObject *convert(PyObject *self, PyObject *args) {
    PyObject *input_object, *output_object, *names_object, *values_object;
    if (!PyArg_ParseTuple(args, "O&O&O!O!", PyUnicode_FSConverter, &input_object, PyUnicode_FSConverter, &output_object,
                          &PyList_Type, &names_object, &PyList_Type, &values_object))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(names_object);
    const char **names = NULL, **values = NULL;
    PyObject *result = NULL;
    if (PyList_GET_SIZE(values_object) != n) {
        PyErr_SetString(PyExc_ValueError, "one value is needed for each option name");
        goto done;
    }
    names = PyMem_Calloc(n + 1, sizeof *names);
    values = PyMem_Calloc(n + 1, sizeof *values);
    if (!names || !values) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < n; i++) {
        names[i] = PyUnicode_AsUTF8(PyList_GET_ITEM(names_object, i));
        values[i] = PyUnicode_AsUTF8(PyList_GET_ITEM(values_object, i));
        if (!names[i] || !values[i]) goto done;
    }
    const char *input = PyBytes_AS_STRING(input_object), *output = PyBytes_AS_STRING(output_object);
    char message[MESSAGE_SIZE] = "";
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = koe_convert(input, output, names, values, (int)n, message, sizeof message);
    Py_END_ALLOW_THREADS
    if (status != KOE_OK) { raise_status(status, message); goto done; }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyMem_Free(names);
    PyMem_Free(values);
    Py_DECREF(input_object);
    Py_DECREF(output_object);
    return result;
}

/* ---- the changer ---- */

typedef struct {
    PyObject_HEAD
    koe_changer *changer;
    int channels;
    /* Set while a call runs without the GIL: a second thread is refused rather than let into the changer. */
    int busy;
} Changer;

static int Changer_init(Changer *self, PyObject *args, PyObject *kwargs) {
    int sample_rate, channels, live, threads;
    if (!PyArg_ParseTuple(args, "iipi", &sample_rate, &channels, &live, &threads)) return -1;
    if (self->changer) { PyErr_SetString(PyExc_RuntimeError, "the changer is already made"); return -1; }
    char message[MESSAGE_SIZE] = "";
    int status = KOE_OK;
    self->changer = koe_create_changer(sample_rate, channels, live, threads, &status, message, sizeof message);
    if (!self->changer) { raise_status(status, message); return -1; }
    self->channels = channels;
    return 0;
}

static void Changer_dealloc(Changer *self) {
    koe_destroy(self->changer);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The error of a call on a changer whose init did not run or failed; NULL. */
static PyObject *not_initialised(void) {
    PyErr_SetString(PyExc_RuntimeError, "the changer was not initialised");
    return NULL;
}

/* Claims the changer for one call; fails when it is not made or another thread is in it. */
static int claim(Changer *self) {
    if (!self->changer) { not_initialised(); return -1; }
    if (self->busy) { PyErr_SetString(PyExc_RuntimeError, "the changer is in use by another thread"); return -1; }
    self->busy = 1;
    return 0;
}

/* Channel pointers into a C-contiguous (channels, frames) float32 buffer. */
static float **channel_pointers(Changer *self, Values *values, Py_ssize_t frames) {
    float **pointers = PyMem_Calloc(self->channels, sizeof *pointers);
    if (!pointers) { PyErr_NoMemory(); return NULL; }
    for (int c = 0; c < self->channels; c++) pointers[c] = (float *)values->view.buf + c * frames;
    return pointers;
}

/* process(input, output, frames): both C-contiguous float32, channels * frames values, planar. */
static PyObject *Changer_process(Changer *self, PyObject *args) {
    PyObject *input_object, *output_object;
    Py_ssize_t frames;
    if (!PyArg_ParseTuple(args, "OOn", &input_object, &output_object, &frames)) return NULL;
    if (frames < 0 || frames > INT_MAX) return PyErr_Format(PyExc_ValueError, "a block cannot have %zd frames", frames);
    Values input, output = {.held = 0};
    if (get_values(input_object, &input, 'f', 0, "input") != 0) return NULL;
    if (get_values(output_object, &output, 'f', 1, "output") != 0
        || require_count(&input, frames * self->channels, "input") != 0
        || require_count(&output, frames * self->channels, "output") != 0 || claim(self) != 0) {
        release(&input); release(&output); return NULL;
    }
    float **in = channel_pointers(self, &input, frames), **out = channel_pointers(self, &output, frames);
    int status = KOE_ERROR_ARGUMENT;
    if (in && out) {
        Py_BEGIN_ALLOW_THREADS
        status = koe_process(self->changer, (const float *const *)in, out, (int)frames);
        Py_END_ALLOW_THREADS
    }
    self->busy = 0;
    PyMem_Free(in); PyMem_Free(out);
    release(&input); release(&output);
    if (PyErr_Occurred()) return NULL;
    if (status != KOE_OK) return raise_status(status, NULL);
    Py_RETURN_NONE;
}

/* finish(output): C-contiguous float32 of channels * latency values. */
static PyObject *Changer_finish(Changer *self, PyObject *args) {
    PyObject *output_object;
    if (!PyArg_ParseTuple(args, "O", &output_object)) return NULL;
    if (!self->changer) return not_initialised();
    Py_ssize_t latency = koe_latency(self->changer);
    Values output;
    if (get_values(output_object, &output, 'f', 1, "output") != 0) return NULL;
    if (require_count(&output, latency * self->channels, "output") != 0 || claim(self) != 0) { release(&output); return NULL; }
    float **out = channel_pointers(self, &output, latency);
    int status = KOE_ERROR_ARGUMENT;
    if (out) {
        Py_BEGIN_ALLOW_THREADS
        status = koe_finish(self->changer, out);
        Py_END_ALLOW_THREADS
    }
    self->busy = 0;
    PyMem_Free(out);
    release(&output);
    if (PyErr_Occurred()) return NULL;
    if (status != KOE_OK) return raise_status(status, "the stream has already finished: call reset() to start a new one");
    Py_RETURN_NONE;
}

static PyObject *Changer_reset(Changer *self, PyObject *unused) {
    if (claim(self) != 0) return NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = koe_reset(self->changer);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    if (status != KOE_OK) return raise_status(status, NULL);
    Py_RETURN_NONE;
}

/* set(name, value): one numeric voice setting by its Python property's name. */
static PyObject *Changer_set(Changer *self, PyObject *args) {
    const char *name;
    double value;
    if (!PyArg_ParseTuple(args, "sd", &name, &value)) return NULL;
    if (claim(self) != 0) return NULL;
    int status = KOE_ERROR_ARGUMENT;
    if (strcmp(name, "pitch") == 0) status = koe_set_pitch(self->changer, value);
    else if (strcmp(name, "semitones") == 0) status = koe_set_semitones(self->changer, value);
    else if (strcmp(name, "formant") == 0) status = koe_set_formant(self->changer, value);
    else if (strcmp(name, "gain_db") == 0) status = koe_set_gain_db(self->changer, value);
    else if (strcmp(name, "pitch_range") == 0) status = koe_set_pitch_range(self->changer, value);
    else if (strcmp(name, "pitch_median") == 0) status = koe_set_pitch_median(self->changer, value);
    else if (strcmp(name, "whisper") == 0) status = koe_set_whisper(self->changer, value != 0);
    else if (strcmp(name, "limit") == 0) status = koe_set_limit(self->changer, value != 0);
    self->busy = 0;
    if (status != KOE_OK) return PyErr_Format(PyExc_ValueError, "no voice setting named '%s'", name);
    Py_RETURN_NONE;
}

static PyObject *Changer_set_preset(Changer *self, PyObject *args) {
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
    if (claim(self) != 0) return NULL;
    int status = koe_set_preset(self->changer, name);
    self->busy = 0;
    if (status != KOE_OK) return PyErr_Format(PyExc_ValueError, "unknown preset '%s' (see koe.presets())", name);
    Py_RETURN_NONE;
}

/* set_equalizer(specs): a list of str in the CLI's --eq form. */
static PyObject *Changer_set_equalizer(Changer *self, PyObject *args) {
    PyObject *list;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &list)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(list);
    const char **specs = PyMem_Calloc(n + 1, sizeof *specs);
    if (!specs) return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        specs[i] = PyUnicode_AsUTF8(PyList_GET_ITEM(list, i));
        if (!specs[i]) { PyMem_Free(specs); return NULL; }
    }
    if (claim(self) != 0) { PyMem_Free(specs); return NULL; }
    char message[MESSAGE_SIZE] = "";
    int status = koe_set_equalizer(self->changer, specs, (int)n, message, sizeof message);
    self->busy = 0;
    PyMem_Free(specs);
    if (status != KOE_OK) return raise_status(status, message);
    Py_RETURN_NONE;
}

/* set_snap(scale or None, strength, speed, a4) */
static PyObject *Changer_set_snap(Changer *self, PyObject *args) {
    const char *scale;
    double strength, speed, a4;
    if (!PyArg_ParseTuple(args, "zddd", &scale, &strength, &speed, &a4)) return NULL;
    if (claim(self) != 0) return NULL;
    char message[MESSAGE_SIZE] = "";
    int status = koe_set_snap(self->changer, scale, strength, speed, a4, message, sizeof message);
    self->busy = 0;
    if (status != KOE_OK) return raise_status(status, message);
    Py_RETURN_NONE;
}

/* set_vibrato(rate, depth): rate 0 turns it off. */
static PyObject *Changer_set_vibrato(Changer *self, PyObject *args) {
    double rate, depth;
    if (!PyArg_ParseTuple(args, "dd", &rate, &depth)) return NULL;
    if (claim(self) != 0) return NULL;
    int status = koe_set_vibrato(self->changer, rate, depth);
    self->busy = 0;
    if (status != KOE_OK) return raise_status(status, NULL);
    Py_RETURN_NONE;
}

/* voice(): the settings as the changer holds them, a dict. */
static PyObject *Changer_voice(Changer *self, PyObject *unused) {
    koe_voice_settings voice;
    if (!self->changer || koe_get_voice(self->changer, &voice) != KOE_OK) {
        return not_initialised();
    }
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d,s:O,s:O}", "pitch", voice.pitch, "formant", voice.formant,
                         "pitch_range", voice.pitch_range, "pitch_median", voice.pitch_median, "gain_db", voice.gain_db,
                         "whisper", voice.whisper ? Py_True : Py_False, "limit", voice.limit ? Py_True : Py_False);
}

/* set_profile(None) or set_profile(f0_median_hz, f0_spread_semitones, vocal_tract_length_cm, voiced_seconds). */
static PyObject *Changer_set_profile(Changer *self, PyObject *args) {
    koe_profile_result profile;
    int known = PyTuple_GET_SIZE(args) != 1 || PyTuple_GET_ITEM(args, 0) != Py_None;
    if (known && !PyArg_ParseTuple(args, "dddd", &profile.f0_median_hz, &profile.f0_spread_semitones,
                                   &profile.vocal_tract_length_cm, &profile.voiced_seconds))
        return NULL;
    if (claim(self) != 0) return NULL;
    int status = koe_set_profile(self->changer, known ? &profile : NULL);
    self->busy = 0;
    if (status != KOE_OK) {
        return PyErr_Format(PyExc_ValueError, "not a voice's profile: f0_median_hz must be 10 to 5000 Hz, "
                            "vocal_tract_length_cm positive or NaN, the spread and voiced seconds at least 0");
    }
    Py_RETURN_NONE;
}

/* profile(): the profile the voice aims from, (f0_median_hz, f0_spread_semitones, vocal_tract_length_cm,
 * voiced_seconds), or None. */
static PyObject *Changer_profile(Changer *self, PyObject *unused) {
    koe_profile_result profile;
    if (!self->changer || koe_get_profile(self->changer, &profile) != KOE_OK) {
        return not_initialised();
    }
    if (isnan(profile.f0_median_hz)) Py_RETURN_NONE;
    return Py_BuildValue("(dddd)", profile.f0_median_hz, profile.f0_spread_semitones, profile.vocal_tract_length_cm,
                         profile.voiced_seconds);
}

/* ratios(): (pitch, formant) the vocoder gave its latest frame. */
static PyObject *Changer_ratios(Changer *self, PyObject *unused) {
    double pitch, formant;
    if (!self->changer || koe_get_ratios(self->changer, &pitch, &formant) != KOE_OK) {
        return not_initialised();
    }
    return Py_BuildValue("(dd)", pitch, formant);
}

static PyObject *Changer_latency(Changer *self, void *closure) {
    if (!self->changer) return not_initialised();
    return PyLong_FromLong(koe_latency(self->changer));
}

static PyMethodDef Changer_methods[] = {
    {"process", (PyCFunction)Changer_process, METH_VARARGS, "process(input, output, frames): planar float32 buffers."},
    {"finish", (PyCFunction)Changer_finish, METH_VARARGS, "finish(output): the latency frames still held."},
    {"reset", (PyCFunction)Changer_reset, METH_NOARGS, "reset(): forget the stream."},
    {"set", (PyCFunction)Changer_set, METH_VARARGS, "set(name, value): one numeric voice setting."},
    {"set_preset", (PyCFunction)Changer_set_preset, METH_VARARGS, "set_preset(name)."},
    {"set_equalizer", (PyCFunction)Changer_set_equalizer, METH_VARARGS, "set_equalizer(specs)."},
    {"set_snap", (PyCFunction)Changer_set_snap, METH_VARARGS, "set_snap(scale or None, strength, speed, a4)."},
    {"set_vibrato", (PyCFunction)Changer_set_vibrato, METH_VARARGS, "set_vibrato(rate, depth): rate 0 is off."},
    {"voice", (PyCFunction)Changer_voice, METH_NOARGS, "voice(): the settings, a dict."},
    {"set_profile", (PyCFunction)Changer_set_profile, METH_VARARGS,
     "set_profile(f0_median_hz, f0_spread_semitones, vocal_tract_length_cm, voiced_seconds) or set_profile(None)."},
    {"profile", (PyCFunction)Changer_profile, METH_NOARGS, "profile(): the profile aimed from, a 4-tuple, or None."},
    {"ratios", (PyCFunction)Changer_ratios, METH_NOARGS, "ratios(): (pitch, formant) of the latest frame."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Changer_getset[] = {
    {"latency", (getter)Changer_latency, NULL, "Frames between an input frame and its output frame.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ChangerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = MODULE_NAME(KOE_EXTENSION) ".Changer",
    .tp_basicsize = sizeof(Changer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Changer(sample_rate, channels, live, threads): koe_changer of koe.h; see koe.VoiceChanger.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Changer_init,
    .tp_dealloc = (destructor)Changer_dealloc,
    .tp_methods = Changer_methods,
    .tp_getset = Changer_getset,
};

static PyMethodDef methods[] = {
    {"frame_count", frame_count, METH_VARARGS, "frame_count(fs, frame_period, samples)"},
    {"dio", dio, METH_VARARGS, "dio(x, fs, f0_floor, f0_ceil, channels_in_octave, frame_period, speed, allowed_range, f0, time)"},
    {"harvest", harvest, METH_VARARGS, "harvest(x, fs, f0_floor, f0_ceil, frame_period, f0, time)"},
    {"stonemask", stonemask, METH_VARARGS, "stonemask(x, fs, time, f0, refined)"},
    {"cheaptrick_fft_size", cheaptrick_fft_size, METH_VARARGS, "cheaptrick_fft_size(fs, f0_floor)"},
    {"cheaptrick_f0_floor", cheaptrick_f0_floor, METH_VARARGS, "cheaptrick_f0_floor(fs, fft_size)"},
    {"cheaptrick", cheaptrick, METH_VARARGS, "cheaptrick(x, fs, time, f0, q1, fft_size, threads, sp)"},
    {"d4c", d4c, METH_VARARGS, "d4c(x, fs, time, f0, threshold, fft_size, threads, ap)"},
    {"synthesis_length", synthesis_length, METH_VARARGS, "synthesis_length(fs, frame_period, frames)"},
    {"synthesize", synthesize, METH_VARARGS, "synthesize(f0, sp, ap, bins, fs, frame_period, y)"},
    {"aperiodicity_band_count", aperiodicity_band_count, METH_VARARGS, "aperiodicity_band_count(fs)"},
    {"code_aperiodicity", code_aperiodicity, METH_VARARGS, "code_aperiodicity(ap, frames, bins, bands, fs, fft_size, 0, coded)"},
    {"decode_aperiodicity", decode_aperiodicity, METH_VARARGS, "decode_aperiodicity(coded, frames, bands, bins, fs, fft_size, 0, ap)"},
    {"code_spectral_envelope", code_spectral_envelope, METH_VARARGS,
     "code_spectral_envelope(sp, frames, bins, dimensions, fs, fft_size, dimensions, coded)"},
    {"decode_spectral_envelope", decode_spectral_envelope, METH_VARARGS,
     "decode_spectral_envelope(coded, frames, dimensions, bins, fs, fft_size, dimensions, sp)"},
    {"convert", convert, METH_VARARGS, "convert(input, output, names, values)"},
    {"profile", profile, METH_VARARGS, "profile(x, fs): (f0_median_hz, f0_spread_semitones, vocal_tract_length_cm, voiced_seconds)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, MODULE_NAME(KOE_EXTENSION), "koe's C ABI for Python; use koe and koe.world.", -1, methods,
};

PyMODINIT_FUNC MODULE_INIT(KOE_EXTENSION)(void) {
    if (PyType_Ready(&ChangerType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&ChangerType);
    if (PyModule_AddObject(m, "Changer", (PyObject *)&ChangerType) < 0) {
        Py_DECREF(&ChangerType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
