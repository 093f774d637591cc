/* _fastcall.c -- the hot path of JITKernel.__call__ (python/tilelang_ptx/kernel.py) in C, for plain
 * torch.Tensor arguments: reads each input's data_ptr/shape/stride/dtype/device with stable-ABI calls,
 * fills the kernel's tl_arg/DLTensor array, allocates the out_idx outputs through PyTorch's caching
 * allocator (torch.empty_like of a template, new_empty, or torch.empty: set_alloc), takes the current PyTorch stream, calls
 * tl_kernel_call and returns the output(s).
 *
 * Built on the stable ABI (Py_LIMITED_API 3.11: one _fastcall.abi3.so loads on CPython >= 3.11) by
 * python/setup.py, the one owner of its build recipe (pip install, scripts/build-device.sh).  It does not
 * link libtilelang: kernel.py hands it tl_kernel_call's address from the ctypes-loaded library.
 *
 * kernel.py's JITKernel derives from Caller, whose __call__ (C, no Python frame) runs the kernel's Plan
 * (self._fast) and otherwise the pure-Python path self._call_py.
 * Contract with kernel.py: a Plan returns NotImplemented, having run and allocated nothing,
 * whenever the call is not one it handles exactly as the pure-Python path does (an argument that is not
 * a plain torch.Tensor of a registered dtype or a Python int/float, a wrong argument count, more than
 * TL_FC_MAX_DIMS dims, a Python error while reading an argument or allocating, torch not registered yet,
 * the plan in use by another thread); kernel.py then takes the pure-Python path, which gives the same
 * results and raises the same errors.  A failing tl_kernel_call is reported through kernel.py's
 * _call_failed(ctx, status), the pure path's own error raiser. */
#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030B0000
#endif
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tilelang/runtime.h"

#define TL_FC_MAX_DIMS 8 /* kernel.py's MAX_DIMS */
#define TL_FC_MAX_DTYPES 16

typedef tl_status (*tl_call_fn)(tl_context *, tl_kernel *, const tl_arg *, size_t, void *, DLManagedTensor **);

/* One out_idx output: its parameter, DLPack dtype, and per dim a static size (src_pos < 0) or the
 * input position and dim whose size binds it. */
typedef struct {
  int param, nd;
  uint8_t code, bits;
  int64_t dims[TL_FC_MAX_DIMS];
  int src_pos[TL_FC_MAX_DIMS], src_dim[TL_FC_MAX_DIMS];
  PyObject *dtype_name;  /* str: the torch dtype's attribute name */
  PyObject *dtype;       /* the torch dtype, resolved on first use (NULL before) */
  PyObject *kw;          /* {"dtype": dtype} */
  PyObject *shape;       /* the size tuple when every dim is static, else NULL */
  PyObject *tmpl;        /* alloc "empty_like": a one-element tensor expanded to shape, on device tmpl_dev */
  int tmpl_dev, no_tmpl; /* no_tmpl: empty_like(tmpl) is not compact here, new_empty instead */
  PyObject *slab;        /* alloc "slab": a list of the views not yet handed out (None where handed out) */
  Py_ssize_t slab_next;
  int slab_dev;
  void *slab_stream; /* the slab's device and stream: a call on another takes a new slab */
} fc_out;

typedef struct {
  PyObject_HEAD tl_kernel *kernel;
  tl_call_fn call;
  int n, n_in, n_out;
  int *in_param;   /* per input position: its parameter */
  char *in_tensor; /* per input position: 1 tensor, 0 scalar */
  fc_out *outs;
  tl_arg *args; /* args[n], then n DLTensor regions of REGION bytes */
  char *regions;
  int busy; /* in use by a call (which may let other threads run: torch allocation, the CPU
                      executor); another thread's call meanwhile takes the pure-Python path */
} Plan;

#define REGION (sizeof(DLTensor) + 16 * TL_FC_MAX_DIMS)

/* ------------------------------------------------------------------ module state (one interpreter) */
static PyObject *g_tensor_type; /* torch.Tensor (set_torch) */
static PyObject *g_dt_obj[TL_FC_MAX_DTYPES];
static uint8_t g_dt_code[TL_FC_MAX_DTYPES], g_dt_bits[TL_FC_MAX_DTYPES];
static int g_n_dt;
static PyObject *g_torch;      /* the torch module (dtypes by name, torch.empty) */
static PyObject *g_raw_stream; /* device id -> CUstream int */
static PyObject *g_context_fn; /* _lib.context: the calling thread's tl_context */
static PyObject *g_fail_fn;    /* kernel._call_failed(ctx, status): raises */
/* how outputs are allocated (set_alloc): */
enum { ALLOC_EMPTY_LIKE, ALLOC_NEW_EMPTY, ALLOC_EMPTY, ALLOC_SLAB, N_ALLOC };
static const char *const g_alloc_names[] = {"empty_like", "new_empty", "empty", "slab"};
#define SLAB_BYTES (1 << 20) /* "slab": one allocation holds up to 64 outputs of <= SLAB_BYTES / 4 */
#define SLAB_MAX_VIEWS 64
static int g_alloc_mode;
static unsigned long long g_calls; /* calls completed here */
static _Thread_local tl_context *t_ctx;
static PyObject *g_plan_type;            /* Plan */
static PyObject *g_empty, *g_empty_like; /* torch.empty, torch.empty_like */
static PyObject *s_data_ptr, *s_shape, *s_stride, *s_dtype, *s_get_device, *s_new_empty, *s_empty, *s_device, *s_stream,
    *s__fast, *s__call_py, *s_expand, *s_is_contiguous, *s_empty_like, *s_unbind;

static PyObject *fallback(void) {
  PyErr_Clear();
  Py_RETURN_NOTIMPLEMENTED;
}

/* ------------------------------------------------------------------ Plan */
static void plan_free_parts(Plan *p) {
  for (int j = 0; p->outs && j < p->n_out; ++j) {
    Py_XDECREF(p->outs[j].dtype_name);
    Py_XDECREF(p->outs[j].dtype);
    Py_XDECREF(p->outs[j].kw);
    Py_XDECREF(p->outs[j].shape);
    Py_XDECREF(p->outs[j].tmpl);
    Py_XDECREF(p->outs[j].slab);
  }
  free(p->outs);
  free(p->in_param);
  free(p->in_tensor);
  free(p->args);
  p->outs = NULL, p->in_param = NULL, p->in_tensor = NULL, p->args = NULL;
}

static void plan_dealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  plan_free_parts((Plan *)self);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(self);
  Py_DECREF(tp);
}

static int parse_out(fc_out *o, PyObject *spec, int n_in) {
  PyObject *dims;
  int code, bits;
  if (!PyArg_ParseTuple(spec, "iiiUO!", &o->param, &code, &bits, &o->dtype_name, &PyTuple_Type, &dims)) return -1;
  Py_INCREF(o->dtype_name);
  o->code = (uint8_t)code, o->bits = (uint8_t)bits;
  o->nd = (int)PyTuple_Size(dims);
  if (o->nd > TL_FC_MAX_DIMS) {
    PyErr_SetString(PyExc_ValueError, "too many dims");
    return -1;
  }
  int all_static = 1;
  for (int d = 0; d < o->nd; ++d) {
    PyObject *x = PyTuple_GetItem(dims, d);
    o->src_pos[d] = -1;
    if (PyLong_Check(x)) {
      o->dims[d] = PyLong_AsLongLong(x);
    } else if (!PyArg_ParseTuple(x, "ii", &o->src_pos[d], &o->src_dim[d]) || o->src_pos[d] < 0 ||
               o->src_pos[d] >= n_in) {
      PyErr_SetString(PyExc_ValueError, "a dim is an int or (input position, dim)");
      return -1;
    } else {
      all_static = 0;
    }
  }
  if (PyErr_Occurred()) return -1;
  if (all_static) {
    o->shape = PyTuple_New(o->nd);
    for (int d = 0; o->shape && d < o->nd; ++d) PyTuple_SetItem(o->shape, d, PyLong_FromLongLong(o->dims[d]));
    if (!o->shape) return -1;
  }
  return 0;
}

/* Plan(kernel_addr, call_addr, n_params, inputs, outputs):
 *   inputs: per input position (parameter index, is_tensor);
 *   outputs: per out_idx output (parameter index, DLPack code, bits, torch dtype name, dims), a dim an
 *   int or (input position, dim). */
static PyObject *plan_new(PyTypeObject *tp, PyObject *a, PyObject *kw) {
  PyObject *kaddr, *caddr, *ins, *outs;
  int n;
  if (kw && PyDict_Size(kw)) {
    PyErr_SetString(PyExc_TypeError, "Plan() takes no keyword arguments");
    return NULL;
  }
  if (!PyArg_ParseTuple(a, "OOiO!O!", &kaddr, &caddr, &n, &PyTuple_Type, &ins, &PyTuple_Type, &outs)) return NULL;
  allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
  Plan *p = (Plan *)alloc(tp, 0);
  if (!p) return NULL;
  p->kernel = PyLong_AsVoidPtr(kaddr);
  p->call = (tl_call_fn)PyLong_AsVoidPtr(caddr);
  p->n = n;
  p->n_in = (int)PyTuple_Size(ins);
  p->n_out = (int)PyTuple_Size(outs);
  int nn = n > 0 ? n : 1;
  p->in_param = calloc((size_t)p->n_in + 1, sizeof(int));
  p->in_tensor = calloc((size_t)p->n_in + 1, 1);
  p->outs = calloc((size_t)p->n_out + 1, sizeof(fc_out));
  p->args = calloc((size_t)nn, sizeof(tl_arg) + REGION);
  if (PyErr_Occurred() || !p->in_param || !p->in_tensor || !p->outs || !p->args || !p->kernel || !p->call) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad Plan arguments");
    Py_DECREF(p);
    return NULL;
  }
  p->regions = (char *)(p->args + nn);
  for (int i = 0; i < p->n_in; ++i) {
    int param, is_tensor;
    if (!PyArg_ParseTuple(PyTuple_GetItem(ins, i), "ip", &param, &is_tensor) || param < 0 || param >= n) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "input parameter out of range");
      Py_DECREF(p);
      return NULL;
    }
    p->in_param[i] = param, p->in_tensor[i] = (char)is_tensor;
  }
  for (int j = 0; j < p->n_out; ++j) {
    if (parse_out(&p->outs[j], PyTuple_GetItem(outs, j), p->n_in) < 0 || p->outs[j].param < 0 ||
        p->outs[j].param >= n) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "output parameter out of range");
      Py_DECREF(p);
      return NULL;
    }
  }
  return (PyObject *)p;
}

static DLTensor *region(Plan *p, int param) { return (DLTensor *)(p->regions + (size_t)param * REGION); }

/* Fills param's DLTensor from a plain torch.Tensor; sets *did (device id, -1 host), *shape (a new
 * reference to its torch.Size) and *dtype (its torch dtype, borrowed).  -1: not handled here (error set or not; the caller falls back). */
static int read_tensor(Plan *p, int param, PyObject *t, int *did, PyObject **shape, PyObject **dtype) {
  *shape = NULL;
  if ((PyObject *)Py_TYPE(t) != g_tensor_type) return -1;
  PyObject *dt = PyObject_GetAttr(t, s_dtype);
  if (!dt) return -1;
  int k = 0;
  while (k < g_n_dt && g_dt_obj[k] != dt) ++k;
  Py_DECREF(dt); /* the registered dtypes are held by g_dt_obj */
  if (k == g_n_dt) return -1;
  *dtype = g_dt_obj[k]; /* borrowed: g_dt_obj holds it */
  PyObject *sh = PyObject_GetAttr(t, s_shape);
  if (!sh) return -1;
  *shape = sh;
  Py_ssize_t nd = PyTuple_Check(sh) ? PyTuple_Size(sh) : -1;
  if (nd < 0 || nd > TL_FC_MAX_DIMS) return -1;
  PyObject *st = PyObject_CallMethodObjArgs(t, s_stride, NULL);
  if (!st) return -1;
  if (!PyTuple_Check(st) || PyTuple_Size(st) != nd) {
    Py_DECREF(st);
    return -1;
  }
  DLTensor *r = region(p, param);
  int64_t *dims = (int64_t *)(r + 1), *strides = dims + TL_FC_MAX_DIMS;
  for (Py_ssize_t d = 0; d < nd; ++d) {
    dims[d] = PyLong_AsLongLong(PyTuple_GetItem(sh, d));
    strides[d] = PyLong_AsLongLong(PyTuple_GetItem(st, d));
  }
  Py_DECREF(st);
  if (PyErr_Occurred()) return -1;
  PyObject *dv = PyObject_CallMethodObjArgs(t, s_get_device, NULL);
  if (!dv) return -1;
  long dev = PyLong_AsLong(dv);
  Py_DECREF(dv);
  PyObject *ptr = PyObject_CallMethodObjArgs(t, s_data_ptr, NULL);
  if (!ptr) return -1;
  void *data = PyLong_AsVoidPtr(ptr);
  Py_DECREF(ptr);
  if (PyErr_Occurred()) return -1;
  r->data = data;
  r->device.device_type = dev >= 0 ? kDLCUDA : kDLCPU;
  r->device.device_id = dev >= 0 ? (int32_t)dev : 0;
  r->ndim = (int32_t)nd;
  r->dtype.code = g_dt_code[k], r->dtype.bits = g_dt_bits[k], r->dtype.lanes = 1;
  r->shape = dims, r->strides = strides, r->byte_offset = 0;
  p->args[param].kind = TL_ARG_TENSOR;
  p->args[param].v.tensor = r;
  *did = (int)dev;
  return 0;
}

/* Makes o->tmpl, the template of empty_like for a static output: like.new_empty((1,), dtype=).expand(shape)
 * (one element of memory), on device did; checks once that empty_like of it is compact (else o->no_tmpl).
 * -1: no template (no error left set). */
static int template(fc_out *o, PyObject *like, int did) {
  PyObject *m = PyObject_GetAttr(like, s_new_empty);
  PyObject *one = PyLong_FromLong(1);
  PyObject *a = m && one ? Py_BuildValue("((O))", one) : NULL;
  PyObject *e = a ? PyObject_Call(m, a, o->kw) : NULL;
  PyObject *t = e ? PyObject_CallMethodObjArgs(e, s_expand, o->shape, NULL) : NULL;
  PyObject *trial = t ? PyObject_CallFunctionObjArgs(g_empty_like, t, NULL) : NULL;
  PyObject *ok = trial ? PyObject_CallMethodObjArgs(trial, s_is_contiguous, NULL) : NULL;
  int good = ok == Py_True;
  Py_XDECREF(ok);
  Py_XDECREF(trial);
  Py_XDECREF(e);
  Py_XDECREF(a);
  Py_XDECREF(one);
  Py_XDECREF(m);
  PyErr_Clear();
  Py_CLEAR(o->tmpl);
  if (!good) {
    Py_XDECREF(t);
    o->no_tmpl = 1;
    return -1;
  }
  o->tmpl = t, o->tmpl_dev = did;
  return 0;
}

/* Alloc "slab" (opt-in): the next view of a slab, one allocation of K outputs of o's static shape
 * (like.new_empty((K, *shape), dtype=).unbind(0)) made on device did while `stream` was current, so
 * that the caching allocator's stream order covers every view as it covers a torch.empty output; a new
 * slab when the views run out or the device or stream changes.  The views share the slab's storage
 * (which lives while any of them does; torch.save of one saves all K).  NULL: no view (output over
 * SLAB_BYTES / 4, or an error, cleared). */
static PyObject *slab_view(fc_out *o, PyObject *like, int did, void *stream) {
  if (!o->slab || o->slab_next >= PyList_Size(o->slab) || o->slab_dev != did || o->slab_stream != stream) {
    int64_t bytes = o->bits / 8;
    for (int d = 0; d < o->nd; ++d) bytes *= o->dims[d];
    if (bytes <= 0 || bytes > SLAB_BYTES / 4) return NULL;
    long k = (long)(SLAB_BYTES / bytes);
    k = k > SLAB_MAX_VIEWS ? SLAB_MAX_VIEWS : k;
    PyObject *shape = PyTuple_New(o->nd + 1), *views = NULL;
    for (int d = 0; shape && d <= o->nd; ++d) PyTuple_SetItem(shape, d, PyLong_FromLongLong(d ? o->dims[d - 1] : k));
    PyObject *m = shape ? PyObject_GetAttr(like, s_new_empty) : NULL;
    PyObject *a = m ? PyTuple_Pack(1, shape) : NULL;
    PyObject *slab = a ? PyObject_Call(m, a, o->kw) : NULL;
    PyObject *tup = slab ? PyObject_CallMethodObjArgs(slab, s_unbind, NULL) : NULL;
    views = tup ? PySequence_List(tup) : NULL;
    Py_XDECREF(tup);
    Py_XDECREF(slab);
    Py_XDECREF(a);
    Py_XDECREF(m);
    Py_XDECREF(shape);
    Py_CLEAR(o->slab);
    if (!views) {
      PyErr_Clear();
      return NULL;
    }
    o->slab = views, o->slab_next = 0, o->slab_dev = did, o->slab_stream = stream;
  }
  PyObject *v = PyList_GetItem(o->slab, o->slab_next);
  Py_INCREF(v);
  Py_INCREF(Py_None);
  PyList_SetItem(o->slab, o->slab_next++, Py_None); /* handed out: only the caller holds it */
  return v;
}

/* A new torch tensor for output o, of size `shape`, on the device of `like` (device did, stream current),
 * by the allocation set_alloc chose (empty_like and slab fall back to new_empty for shapes they do not
 * serve); NULL with an error set. */
static PyObject *new_output(fc_out *o, PyObject *like, PyObject *like_dtype, int did, void *stream, PyObject *shape) {
  int mode = g_alloc_mode;
  if (mode == ALLOC_SLAB) {
    PyObject *v = o->shape ? slab_view(o, like, did, stream) : NULL;
    if (v) return v;
    mode = ALLOC_EMPTY_LIKE;
  }
  if (mode == ALLOC_EMPTY_LIKE &&
      (!o->shape || o->no_tmpl || ((!o->tmpl || o->tmpl_dev != did) && template(o, like, did) < 0)))
    mode = ALLOC_NEW_EMPTY;
  if (mode == ALLOC_EMPTY_LIKE) return PyObject_CallFunctionObjArgs(g_empty_like, o->tmpl, NULL);
  if (mode == ALLOC_NEW_EMPTY && like_dtype == o->dtype)
    return PyObject_CallMethodObjArgs(like, s_new_empty, shape, NULL);
  PyObject *t = NULL, *a = PyTuple_Pack(1, shape);
  if (a && mode == ALLOC_NEW_EMPTY) {
    PyObject *m = PyObject_GetAttr(like, s_new_empty);
    t = m ? PyObject_Call(m, a, o->kw) : NULL;
    Py_XDECREF(m);
  } else if (a) { /* ALLOC_EMPTY: torch.empty(shape, dtype=, device=) */
    PyObject *kw = PyDict_Copy(o->kw);
    PyObject *dev = kw ? (did >= 0 ? PyLong_FromLong(did) : PyUnicode_FromString("cpu")) : NULL;
    if (dev && PyDict_SetItem(kw, s_device, dev) == 0) t = PyObject_Call(g_empty, a, kw);
    Py_XDECREF(dev);
    Py_XDECREF(kw);
  }
  Py_XDECREF(a);
  return t;
}

/* The output j's torch tensor on the device of `like` (the first tensor input, device did), compact,
 * with its DLTensor filled; NULL: not handled here. */
static PyObject *allocate(Plan *p, fc_out *o, PyObject *like, PyObject *like_dtype, int did, void *stream,
                          PyObject *const *in_shapes) {
  if (!o->dtype) {
    PyObject *dt = PyObject_GetAttr(g_torch, o->dtype_name);
    PyObject *kw = dt ? Py_BuildValue("{sO}", "dtype", dt) : NULL;
    if (!kw) {
      Py_XDECREF(dt);
      return NULL;
    }
    o->dtype = dt, o->kw = kw;
  }
  DLTensor *r = region(p, o->param);
  int64_t *dims = (int64_t *)(r + 1), *strides = dims + TL_FC_MAX_DIMS;
  PyObject *shape = o->shape;
  if (shape) {
    Py_INCREF(shape);
    memcpy(dims, o->dims, sizeof(int64_t) * (size_t)o->nd);
  } else {
    shape = PyTuple_New(o->nd);
    for (int d = 0; shape && d < o->nd; ++d) {
      if (o->src_pos[d] >= 0) {
        PyObject *sh = in_shapes[o->src_pos[d]];
        if (!sh || o->src_dim[d] >= PyTuple_Size(sh)) {
          Py_DECREF(shape);
          return NULL;
        }
        dims[d] = PyLong_AsLongLong(PyTuple_GetItem(sh, o->src_dim[d]));
      } else {
        dims[d] = o->dims[d];
      }
      PyTuple_SetItem(shape, d, PyLong_FromLongLong(dims[d]));
    }
    if (!shape || PyErr_Occurred()) {
      Py_XDECREF(shape);
      return NULL;
    }
  }
  PyObject *t = new_output(o, like, like_dtype, did, stream, shape);
  Py_DECREF(shape);
  if (!t) return NULL;
  PyObject *ptr = PyObject_CallMethodObjArgs(t, s_data_ptr, NULL);
  void *data = ptr ? PyLong_AsVoidPtr(ptr) : NULL;
  Py_XDECREF(ptr);
  if (!ptr || PyErr_Occurred()) {
    Py_DECREF(t);
    return NULL;
  }
  int64_t acc = 1;
  for (int d = o->nd - 1; d >= 0; --d) {
    strides[d] = acc;
    acc *= dims[d];
  }
  r->data = data;
  r->device.device_type = did >= 0 ? kDLCUDA : kDLCPU;
  r->device.device_id = did >= 0 ? did : 0;
  r->ndim = o->nd;
  r->dtype.code = o->code, r->dtype.bits = o->bits, r->dtype.lanes = 1;
  r->shape = dims, r->strides = strides, r->byte_offset = 0;
  p->args[o->param].kind = TL_ARG_TENSOR;
  p->args[o->param].v.tensor = r;
  return t;
}

static tl_context *thread_context(void) {
  if (!t_ctx) {
    PyObject *c = PyObject_CallObject(g_context_fn, NULL);
    if (!c) return NULL;
    t_ctx = PyLong_AsVoidPtr(c);
    Py_DECREF(c);
  }
  return t_ctx;
}

/* The call itself once the arguments are read: outputs, stream, tl_kernel_call. */
static PyObject *run(Plan *p, PyObject *first, int did, PyObject *like_dtype, PyObject *const *in_shapes) {
  PyObject *outs[8] = {0}, **o = p->n_out <= 8 ? outs : calloc((size_t)p->n_out, sizeof(PyObject *));
  PyObject *res = NULL;
  void *stream = NULL;
  tl_context *ctx = thread_context();
  if (!o || !ctx || (p->n_out && !first)) /* outputs without a tensor input: kernel.py's error */
    goto fall;
  if (did >= 0) {
    PyObject *s = PyObject_CallFunction(g_raw_stream, "i", did);
    stream = s ? PyLong_AsVoidPtr(s) : NULL;
    Py_XDECREF(s);
    if (!s || PyErr_Occurred()) goto fall;
  }
  for (int j = 0; j < p->n_out; ++j)
    if (!(o[j] = allocate(p, &p->outs[j], first, like_dtype, did, stream, in_shapes))) goto fall;
  tl_status rc;
  if (did < 0) { /* the CPU executor: a long call, other threads may run meanwhile */
    Py_BEGIN_ALLOW_THREADS rc = p->call(ctx, p->kernel, p->args, (size_t)p->n, stream, NULL);
    Py_END_ALLOW_THREADS
  } else {
    rc = p->call(ctx, p->kernel, p->args, (size_t)p->n, stream, NULL);
  }
  if (rc != TL_OK) {
    PyObject *r = PyObject_CallFunction(g_fail_fn, "Ni", PyLong_FromVoidPtr(ctx), (int)rc);
    Py_XDECREF(r); /* raises */
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "tl_kernel_call failed");
    goto done;
  }
  ++g_calls;
  if (p->n_out == 0) {
    res = Py_None;
    Py_INCREF(res);
  } else if (p->n_out == 1) {
    res = o[0];
    o[0] = NULL;
  } else if ((res = PyList_New(p->n_out))) {
    for (int j = 0; j < p->n_out; ++j) {
      PyList_SetItem(res, j, o[j]); /* steals */
      o[j] = NULL;
    }
  }
  goto done;
fall:
  res = fallback();
done:
  for (int j = 0; o && j < p->n_out; ++j) Py_XDECREF(o[j]);
  if (o != outs) free(o);
  return res;
}

/* The call's result for the inputs `args` (a tuple), or NotImplemented for kernel.py's pure-Python
 * path. */
static PyObject *plan_run(Plan *p, PyObject *args) {
  if (!g_tensor_type || !g_context_fn || p->busy || PyTuple_Size(args) != p->n_in) return fallback();
  PyObject *shapes[16] = {0}, **sh = p->n_in <= 16 ? shapes : calloc((size_t)p->n_in, sizeof(PyObject *));
  PyObject *first = NULL, *first_dt = NULL, *res = NULL;
  int did = -1;
  if (!sh) return fallback();
  p->busy = 1;
  for (int pos = 0; pos < p->n_in; ++pos) {
    PyObject *x = PyTuple_GetItem(args, pos);
    int param = p->in_param[pos];
    if (!p->in_tensor[pos]) { /* scalars: exactly int and float, as _pack_scalar packs them */
      if (PyLong_CheckExact(x)) {
        p->args[param].kind = TL_ARG_INT;
        p->args[param].v.i = PyLong_AsLongLong(x);
      } else if (PyFloat_CheckExact(x)) {
        p->args[param].kind = TL_ARG_FLOAT;
        p->args[param].v.f = PyFloat_AsDouble(x);
      } else {
        goto fall;
      }
      if (PyErr_Occurred()) goto fall;
      continue;
    }
    int d;
    PyObject *dt;
    if (read_tensor(p, param, x, &d, &sh[pos], &dt) < 0) goto fall;
    if (!first) first = x, did = d, first_dt = dt;
  }
  res = run(p, first, did, first_dt, sh);
  goto done;
fall:
  res = fallback();
done:
  p->busy = 0;
  for (int pos = 0; pos < p->n_in; ++pos) Py_XDECREF(sh[pos]);
  if (sh != shapes) free(sh);
  return res;
}

/* plan(args): plan_run, for callers other than Caller. */
static PyObject *plan_call(PyObject *self, PyObject *a, PyObject *kw) {
  PyObject *args;
  if ((kw && PyDict_Size(kw)) || PyTuple_Size(a) != 1 || !PyTuple_Check(args = PyTuple_GetItem(a, 0)))
    return fallback();
  return plan_run((Plan *)self, args);
}

static PyType_Slot plan_slots[] = {
    {Py_tp_doc, (void *)"A compiled kernel's call plan: plan(args) runs the kernel or returns NotImplemented."},
    {Py_tp_new, (void *)plan_new},
    {Py_tp_dealloc, (void *)plan_dealloc},
    {Py_tp_call, (void *)plan_call},
    {0, NULL},
};
static PyType_Spec plan_spec = {"tilelang_ptx._fastcall.Plan", sizeof(Plan), 0, Py_TPFLAGS_DEFAULT, plan_slots};

/* ------------------------------------------------------------------ Caller */
/* The base class of kernel.py's JITKernel: kernel(*args, stream=None) runs self._fast (a Plan) without
 * a Python frame when stream is None, and self._call_py(*args, **kw), the pure-Python path, when there
 * is no plan or it declines the call. */
static PyObject *caller_call(PyObject *self, PyObject *args, PyObject *kw) {
  int plain = !kw || PyDict_Size(kw) == 0;
  if (!plain && PyDict_Size(kw) == 1) {
    PyObject *st = PyDict_GetItem(kw, s_stream); /* borrowed */
    plain = st == Py_None;
  }
  if (plain) {
    PyObject *fast = PyObject_GetAttr(self, s__fast);
    if (!fast) PyErr_Clear();
    else if ((PyObject *)Py_TYPE(fast) == g_plan_type) {
      PyObject *r = plan_run((Plan *)fast, args);
      Py_DECREF(fast);
      if (r != Py_NotImplemented) return r;
      Py_DECREF(r);
    } else {
      Py_DECREF(fast);
    }
  }
  PyObject *m = PyObject_GetAttr(self, s__call_py);
  if (!m) return NULL;
  PyObject *r = PyObject_Call(m, args, kw);
  Py_DECREF(m);
  return r;
}

static PyType_Slot caller_slots[] = {
    {Py_tp_doc, (void *)"Base of JITKernel: its __call__ in C (self._fast, else self._call_py)."},
    {Py_tp_call, (void *)caller_call},
    {0, NULL},
};
static PyType_Spec caller_spec = {"tilelang_ptx._fastcall.Caller", sizeof(PyObject), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, caller_slots};

/* ------------------------------------------------------------------ module functions */
static void hold(PyObject **slot, PyObject *v) { /* *slot = a new reference to v */
  PyObject *old = *slot;
  Py_INCREF(v);
  *slot = v;
  Py_XDECREF(old);
}

/* set_torch(torch, dtypes, raw_stream): registers PyTorch -- torch.Tensor, dtypes as ((torch dtype, DLPack
 * code, bits), ...), raw_stream(device id) -> CUstream int. */
static PyObject *set_torch(PyObject *m, PyObject *a) {
  (void)m;
  PyObject *torch, *dts, *raw;
  if (!PyArg_ParseTuple(a, "OO!O", &torch, &PyTuple_Type, &dts, &raw)) return NULL;
  PyObject *tt = PyObject_GetAttrString(torch, "Tensor");
  if (!tt) return NULL;
  Py_ssize_t n = PyTuple_Size(dts);
  if (n > TL_FC_MAX_DTYPES) n = TL_FC_MAX_DTYPES;
  for (int k = 0; k < g_n_dt; ++k) Py_CLEAR(g_dt_obj[k]);
  g_n_dt = 0;
  for (Py_ssize_t k = 0; k < n; ++k) {
    PyObject *obj;
    int code, bits;
    if (!PyArg_ParseTuple(PyTuple_GetItem(dts, k), "Oii", &obj, &code, &bits)) {
      Py_DECREF(tt);
      return NULL;
    }
    Py_INCREF(obj);
    g_dt_obj[g_n_dt] = obj, g_dt_code[g_n_dt] = (uint8_t)code, g_dt_bits[g_n_dt] = (uint8_t)bits;
    ++g_n_dt;
  }
  PyObject *e = PyObject_GetAttr(torch, s_empty), *el = e ? PyObject_GetAttr(torch, s_empty_like) : NULL;
  if (!el) {
    Py_XDECREF(e);
    Py_DECREF(tt);
    return NULL;
  }
  hold(&g_empty, e);
  hold(&g_empty_like, el);
  Py_DECREF(el);
  Py_DECREF(e);
  hold(&g_tensor_type, tt);
  Py_DECREF(tt);
  hold(&g_torch, torch);
  hold(&g_raw_stream, raw);
  Py_RETURN_NONE;
}

/* set_runtime(context_fn, fail_fn): _lib.context and kernel._call_failed. */
static PyObject *set_runtime(PyObject *m, PyObject *a) {
  (void)m;
  PyObject *ctx, *fail;
  if (!PyArg_ParseTuple(a, "OO", &ctx, &fail)) return NULL;
  hold(&g_context_fn, ctx);
  hold(&g_fail_fn, fail);
  Py_RETURN_NONE;
}

/* set_alloc(name): how outputs are allocated, returning the previous name: "empty_like" (the default:
 * torch.empty_like of a per-output template, a one-element tensor expanded to the output's static shape;
 * new_empty for dynamic shapes), "new_empty" (first_input.new_empty(shape[, dtype=])) or "empty"
 * (torch.empty(shape, dtype=, device=), as the pure-Python path) or "slab" (slab_view: outputs are views
 * of a shared allocation; opt-in). */
static PyObject *set_alloc(PyObject *m, PyObject *a) {
  (void)m;
  const char *name;
  if (!PyArg_ParseTuple(a, "s", &name)) return NULL;
  int prev = g_alloc_mode, k = 0;
  while (k < N_ALLOC && strcmp(name, g_alloc_names[k])) ++k;
  if (k == N_ALLOC)
    return PyErr_Format(PyExc_ValueError, "unknown output allocation '%s' (empty_like, new_empty, empty, slab)", name);
  g_alloc_mode = k;
  return PyUnicode_FromString(g_alloc_names[prev]);
}

/* calls(): how many calls this extension has completed (the fast path taken). */
static PyObject *calls(PyObject *m, PyObject *a) {
  (void)m, (void)a;
  return PyLong_FromUnsignedLongLong(g_calls);
}

static PyMethodDef methods[] = {
    {"set_torch", set_torch, METH_VARARGS, "set_torch(torch, dtypes, raw_stream)"},
    {"set_runtime", set_runtime, METH_VARARGS, "set_runtime(context_fn, fail_fn)"},
    {"set_alloc", set_alloc, METH_VARARGS, "set_alloc('empty_like' | 'new_empty' | 'empty' | 'slab') -> previous"},
    {"calls", calls, METH_NOARGS, "calls completed by the fast path"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT,
                                    "_fastcall",
                                    "The C hot path of JITKernel.__call__ (stable ABI).",
                                    -1,
                                    methods,
                                    NULL,
                                    NULL,
                                    NULL,
                                    NULL};

PyMODINIT_FUNC PyInit__fastcall(void) {
  PyObject *m = PyModule_Create(&module);
  if (!m) return NULL;
  PyObject **names[] = {&s_data_ptr,  &s_shape,  &s_stride,        &s_dtype,      &s_get_device,
                        &s_new_empty, &s_empty,  &s_device,        &s_stream,     &s__fast,
                        &s__call_py,  &s_expand, &s_is_contiguous, &s_empty_like, &s_unbind};
  const char *strs[] = {"data_ptr", "shape", "stride",   "dtype",  "get_device",    "new_empty",  "empty", "device",
                        "stream",   "_fast", "_call_py", "expand", "is_contiguous", "empty_like", "unbind"};
  for (size_t i = 0; i < sizeof names / sizeof *names; ++i)
    if (!(*names[i] = PyUnicode_InternFromString(strs[i]))) {
      Py_DECREF(m);
      return NULL;
    }
  PyObject *tp = PyType_FromSpec(&plan_spec);
  if (!tp || PyModule_AddObject(m, "Plan", tp) < 0) {
    Py_XDECREF(tp);
    Py_DECREF(m);
    return NULL;
  }
  g_plan_type = tp; /* the module holds it */
  PyObject *ct = PyType_FromSpec(&caller_spec);
  if (!ct || PyModule_AddObject(m, "Caller", ct) < 0) {
    Py_XDECREF(ct);
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
