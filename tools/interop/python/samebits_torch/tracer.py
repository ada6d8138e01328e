"""The tracer: every op, module output, gradient and optimiser update of a
PyTorch training loop, as samebits trace records.

Ops are seen through torch.overrides.TorchFunctionMode (functional calls,
tensor methods, operators: `F.relu(x)`, `torch.matmul(a, b)`, `x @ w`,
`x.softmax(-1)`, in-place ones too), module outputs through global module
hooks, gradients through autograd hooks, updates by wrapping every
optimiser's `step`; indexing (`data[a:b]`, `x[i] = v`), which PyTorch 1.13
hands to no mode, by wrapping Tensor.__getitem__ and __setitem__. Each
record lists the probes whose tensors its op received, found by tensor
identity: a tensor is known by its memory, shape, strides, dtype and version
counter (an in-place op makes a new version), and only while a tensor holding
that memory is alive (the one the record was made from, or one it shares
its memory with: a view, the tensor an in-place op wrote into, a detached
copy), so a freed tensor's memory reused by another is never taken for it.
A parameter's `.grad` (and a view of it: `p.grad.detach()`) is its recorded
gradient. An input no traced op made is listed as UNTRACED.
"""
import os
import weakref

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

from . import bounds
from .hashing import MAX_DIMS, canonical, tensor_hash
from .trace import MAX_INPUTS, UNTRACED, Trace

# Ops named as the kernel list names them (kernels/kernels.def) where they
# mean the same, so the verdict knows which have no reduction to reorder.
KERNEL_OPS = {"linear": "dense_fwd", "conv2d": "conv2d_fwd", "relu": "relu_fwd",
              "relu_": "relu_fwd", "max_pool2d": "maxpool_fwd", "dropout": "dropout_fwd"}


def _pair2(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _kernel_op(op, args, kwargs):
    """The kernel list's name of a call, or its own. A max-pool whose windows
    overlap is not the list's maxpool: its gradient sums a window's share
    into elements other windows share too, a sum that can be reordered, so
    it keeps its own name (no bound known) and is never judged exact."""
    if op == "max_pool2d":
        k = _pair2(args[1] if len(args) > 1 else kwargs["kernel_size"])
        stride = args[2] if len(args) > 2 else kwargs.get("stride")
        stride = _pair2(stride) if stride not in (None, ()) and stride != [] else k
        dilation = _pair2(args[4] if len(args) > 4 else kwargs.get("dilation", 1))
        if any(s < d * (w - 1) + 1 for s, d, w in zip(stride, dilation, k)):
            return op
    return KERNEL_OPS.get(op, op)


# The gradient of the i-th tensor input of an op ("": it has none); other
# ops' gradients are <op>_bwd.
BACKWARD_OPS = {"dense_fwd": ("dense_bwd_data", "dense_bwd_weights", "dense_bwd_bias"),
                "conv2d_fwd": ("conv2d_bwd_data", "conv2d_bwd_filter", "conv2d_bwd_bias"),
                "relu_fwd": ("relu_bwd",), "maxpool_fwd": ("maxpool_bwd",),
                "dropout_fwd": ("dropout_bwd",),
                "layer_norm": ("layer_norm_bwd_data", "layer_norm_bwd_weight",
                               "layer_norm_bwd_bias"),
                "embedding": ("", "embedding_bwd_weight")}
# Operators by what they compute (`x @ w` is matmul, `x += y` is add_).
DUNDER_OPS = {"matmul": "matmul", "rmatmul": "matmul", "imatmul": "matmul_",
              "add": "add", "radd": "add", "iadd": "add_", "sub": "sub", "rsub": "rsub",
              "isub": "sub_", "mul": "mul", "rmul": "mul", "imul": "mul_",
              "truediv": "div", "rtruediv": "rdiv", "rdiv": "rdiv", "itruediv": "div_",
              "pow": "pow",
              "rpow": "rpow", "neg": "neg", "getitem": "getitem", "setitem": "setitem"}
# Properties that are ops (views); every other property read is not.
VIEW_PROPERTIES = {"T", "mT", "H", "mH", "real", "imag"}
# Calls that compute nothing a trace should hold (backward and grad: the
# gradients they make are recorded by the hooks, as they are made).
PASS_THROUGH = {"detach", "detach_", "requires_grad_", "retain_grad", "register_hook",
                "backward", "grad", "numpy", "tolist", "item", "__repr__", "__format__",
                "__len__", "__iter__", "__bool__", "__hash__", "size", "dim", "stride",
                "data_ptr", "storage_offset", "is_contiguous", "element_size",
                "numel", "__reduce_ex__", "__deepcopy__",
                # uninitialised memory: its bits mean nothing
                "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}

_active = None          # the tracer in force, for source(), op() and step wrappers


def active():
    """The Tracer in force, or None."""
    return _active


def _tensors(obj, out):
    """Every tensor of nested tuples, lists, dicts and slices, in order,
    once each."""
    if isinstance(obj, torch.Tensor):
        if all(t is not obj for t in out):
            out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            _tensors(o, out)
    elif isinstance(obj, slice):
        _tensors((obj.start, obj.stop, obj.step), out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors(o, out)
    return out


def _key(t):
    """What a tensor is: its memory, geometry, dtype and version."""
    try:
        return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype, t._version)
    except (RuntimeError, NotImplementedError):     # no storage (meta, sparse)
        return None


def _array(t):
    """The tensor as a hashable array (int64 as i64, narrower integers and
    bools as i32), or None when the trace format cannot hold it (another
    dtype, more than 4 dimensions)."""
    t = t.detach()
    if t.dim() > MAX_DIMS:
        return None
    if t.dtype == torch.bool:
        t = t.to(torch.int32)
    if t.dtype not in (torch.float32, torch.int32, torch.int64, torch.int16,
                       torch.int8, torch.uint8):
        return None
    return canonical(t.cpu().numpy())


def _storage(t):
    """The address of a tensor's storage (views and in-place results share it)."""
    try:
        return t.storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return None


def op_name(func):
    """The op a torch function call is: `relu`, `matmul` for `@`, `T` for `.T`."""
    name = getattr(func, "__name__", None) or type(func).__name__
    if name == "__get__":
        owner = getattr(func, "__self__", None)
        return getattr(owner, "__name__", name)
    if name.startswith("__") and name.endswith("__"):
        return DUNDER_OPS.get(name[2:-2], name)
    return name


class _Node:
    """A tensor some record holds: the probe that made it (and its latest
    name), the tensors holding its memory, the calls that read it this step,
    and its gradients."""

    def __init__(self, name, tensor, shares=None, digest=None):
        self.first = name
        self.name = name
        self.digest = digest    # of the record's tensor
        # weak: the tensor and those it shares memory with (`shares`' own)
        self.refs = [weakref.ref(tensor)] + (shares.refs if shares else [])
        self.readers = []       # _Call
        self.grad_names = []    # of this step
        self.grad = None        # the latest gradient, kept only while dumping
        self.hook = None        # the gradient hook in force (a token)

    def alive(self):
        """Whether its memory is still the tensor's (a tensor holding it lives)."""
        return any(r() is not None for r in self.refs)


class _Call:
    """One traced call: its op, its inputs' names and nodes (and, while
    dumping, the inputs and arguments themselves) and the nodes it made."""

    def __init__(self, step, op, in_names, read, inputs, args, kwargs):
        self.step, self.op, self.in_names, self.read = step, op, in_names, read
        self.inputs, self.args, self.kwargs = inputs, args, kwargs
        self.outputs = []


class _Mode(TorchFunctionMode):
    def __init__(self, tracer):
        super().__init__()
        self.tracer = tracer

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tracer = self.tracer
        op = op_name(func)
        if tracer._paused or op in PASS_THROUGH or (
                getattr(func, "__name__", "") == "__get__" and op not in VIEW_PROPERTIES):
            return func(*args, **kwargs)
        return tracer._call(func, op, args, kwargs)


class Tracer:
    """Traces everything PyTorch does between enter and exit.

        with samebits_torch.Tracer("run.trace", case="my_model") as tracer:
            for x, y in batches:
                tracer.source("batch.x", x)     # optional: name the data
                loss = loss_fn(model(x), y)
                opt.zero_grad(); loss.backward(); opt.step()

    Probe names (one per call, `#k` for the k-th call of a name in a step):
      <module>.fwd.out            a module's output (`encoder.fc1.fwd.out`)
      <scope>.<op>                an op called inside module <scope>
                                  (`encoder.fc1.linear`, `block.relu`)
      <probe>.grad                the gradient of a probe's tensor
      <module>.<param>.grad       a parameter's gradient (`fc1.weight.grad`)
      <module>.<param>.grad.sum   what its .grad holds when that is not the
                                  step's one gradient (several backward
                                  passes, or a .grad not zeroed)
      <opt>.<module>.<param>      a parameter after optimiser <opt>'s update
      init.<module>.<param>       a parameter (or buffer) when first seen
      <name>                      a source (`source(name, tensor)`)
    Each optimiser update ends a step (steps count from 0; the update's
    records are its step's last). A module is named by its attribute path
    from the outermost module called, which is named by its class in lower
    case unless `name(module, ...)` says otherwise. Tensors the trace format
    cannot hold (float64, more than 4 dimensions) get no record: their
    readers see an untraced input.

    The trace is written at exit (not when the block raises), with header
    `case`, the XXH3-128 of `digest_text` (what decides the records: model,
    data, settings; not the thread count) as digest, `reference <family>
    <threads>` (default: loose and torch.get_num_threads()). `dump` =
    (probe, step, directory) writes what `samebits run --dump` writes for
    that record: <probe>.npy, <probe>.bound.npy when the op has a bound,
    <probe>.in<i>.npy for its inputs; `dumped` says whether it did.
    """

    def __init__(self, path, case, digest_text="", family="loose", threads=None,
                 build="", dump=None):
        self.path, self.case, self.digest_text, self.family = path, case, digest_text, family
        self.threads, self.build = threads, build
        self.dump = dump
        self.dumped = False
        self.trace = Trace()
        self.step = 0
        self._paused = 0
        self._counts = {}
        self._nodes = {}            # _key -> _Node
        self._module_names = {}     # id(module) -> name
        self._modules = []          # keeps named modules alive, so their ids stay theirs
        self._scope = []            # (module, call name, inputs) of the modules running
        self._param_names = {}      # id(parameter) -> "<module>.<param>"
        self._leaves_hooked = {}    # id(leaf) -> leaf (kept, so the id stays its)
        self._param_grads = {}      # id(parameter) -> nodes of its gradients this step
        self._grad_before = {}      # id(parameter) -> what its .grad held before them
        self._handles = []
        self._steps = {}            # optimiser class -> its own step
        self._param_before = {}     # id(parameter) -> its probe before the update

    # ---- public -----------------------------------------------------------

    def name(self, module, name):
        """Names an outermost module (its submodules follow)."""
        self._module_names[id(module)] = name
        self._modules.append(module)
        return module

    def source(self, name, tensor):
        """Records data entering the run (a batch, labels) as a source."""
        if _array(tensor) is None:
            raise ValueError(f"source {name}: a trace holds float32 or integer tensors of at "
                             f"most {MAX_DIMS} dimensions, not {tensor.dtype} "
                             f"{tuple(tensor.shape)}")
        with self._pause():
            self._record(name, "source", tensor, [], None)

    def __enter__(self):
        global _active
        if _active is not None:
            raise RuntimeError("a samebits_torch.Tracer is already tracing")
        _active = self
        mm = torch.nn.modules.module
        self._handles = [mm.register_module_forward_pre_hook(self._module_pre),
                         mm.register_module_forward_hook(self._module_post)]
        self._wrap_optimizers()
        self._wrap_indexing()
        self._mode = _Mode(self)
        self._mode.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        global _active
        self._mode.__exit__(exc_type, exc, tb)
        for h in self._handles:
            h.remove()
        for cls, step in self._steps.items():
            cls.step = step
        torch.optim.Optimizer.__init__ = self._optimizer_init
        torch.optim.Optimizer.zero_grad = self._zero_grad
        for name, method in self._indexing.items():
            if method is None:
                delattr(torch.Tensor, name)
            else:
                setattr(torch.Tensor, name, method)
        _active = None
        if exc_type is None:
            threads = self.threads or torch.get_num_threads()
            self.trace.write(self.path, self.case, self.digest_text, self.family, threads,
                             self.build or default_build())
        return False

    # ---- naming -----------------------------------------------------------

    def _count(self, base):
        k = self._counts.get(base, 0) + 1
        self._counts[base] = k
        return base if k == 1 else f"{base}#{k}"

    def _scope_name(self):
        return self._scope[-1][1] if self._scope else ""

    def _probe(self, op):
        scope = self._scope_name()
        return self._count(f"{scope}.{op}" if scope else op)

    def _module_name(self, module):
        name = self._module_names.get(id(module))
        if name is not None:
            return name
        name = None
        for parent, _, _ in reversed(self._scope):
            for sub, m in parent.named_modules():
                if m is module and sub:
                    pname = self._module_names[id(parent)]
                    name = f"{pname}.{sub}" if pname else sub
                    break
            if name:
                break
        if name is None:        # an outermost module
            name = type(module).__name__.lower()
            taken = set(self._module_names.values())
            base, k = name, 1
            while name in taken:
                k += 1
                name = f"{base}{k}"
        self.name(module, name)
        return name

    # ---- records and identity --------------------------------------------

    def _lookup(self, t):
        key = _key(t)
        node = self._nodes.get(key)
        if node is not None and node.alive():
            return node
        return self._bind_grad(t, key) if self._param_grads else None

    def _bind_grad(self, t, key):
        """A parameter's .grad (or a view of it) read after this step's
        gradients were recorded: their node when it holds the recorded bits,
        else a record of what the accumulator holds (`<param>.grad.sum`, op
        accumulate_grad: the step's gradients, and what it held before
        them when that was not zero); None when t is no such tensor."""
        for pid, grads in self._param_grads.items():
            p = self._leaves_hooked[pid]
            if p.grad is None or _key(p.grad) != key:
                continue
            before = self._grad_before.get(pid)
            with self._pause():
                digest = tensor_hash(_array(p.grad))
                if len(grads) == 1 and before is None and digest == grads[0].digest:
                    node = _Node(grads[0].name, p.grad, digest=digest)
                    self._nodes[key] = node
                    return node
                name = self._count(f"{self._param_names.get(pid, grads[0].first)}.grad.sum")
                inputs = [g.name for g in grads] + ([before] if before else [])
                return self._record(name, "accumulate_grad", p.grad, _listed(inputs), None)
        return None

    def _in_names(self, tensors):
        names = []
        for t in tensors:
            node = self._lookup(t)
            names.append(node.name if node else UNTRACED)
        return _listed(names)

    def _record(self, name, op, tensor, inputs, call, live=(), bound=None, node=None):
        """Adds a record; returns its node, None when the format cannot hold
        the tensor (its readers then see an untraced input). `node`: the
        tensor's node when it has one (a module's output is its last op's),
        which then goes by the new name."""
        array = _array(tensor)
        if array is None:
            return None
        digest = self.trace.add(self.step, name, op, array, inputs)
        if self._dump_wanted(name):
            self._write_dump(name, array, live, bound)
        if node is not None:
            node.name = name
            return node
        key = _key(tensor)
        if key is None:
            return None
        node = _Node(name, tensor, self._memory_owner(tensor, call), digest)
        self._nodes[key] = node
        if call is not None:
            call.outputs.append(node)
        return node

    def _memory_owner(self, t, call):
        """The node of an input of `call` whose memory t shares (t is a view
        of it, or was written in place), or None."""
        if call is None:
            return None
        where = _storage(t)
        for node in call.read:
            held = node and next((r() for r in node.refs if r() is not None), None)
            if held is not None and where is not None and _storage(held) == where:
                return node
        return None

    def _dump_wanted(self, name):
        return (self.dump is not None and not self.dumped and name == self.dump[0]
                and self.step == self.dump[1])

    def _write_dump(self, name, array, live, bound):
        directory = self.dump[2]
        os.makedirs(directory, exist_ok=True)
        np.save(os.path.join(directory, f"{name}.npy"), array)
        if bound is not None:
            np.save(os.path.join(directory, f"{name}.bound.npy"), bound())
        for k, t in enumerate(live):
            a = _array(t)
            if a is not None:
                np.save(os.path.join(directory, f"{name}.in{k}.npy"), a)
        self.dumped = True

    def _pause(self):
        tracer = self

        class Paused:
            def __enter__(self):
                tracer._paused += 1

            def __exit__(self, *exc):
                tracer._paused -= 1
        return Paused()

    # ---- ops ----------------------------------------------------------------

    def _call(self, func, op, args, kwargs, bound_fn=None):
        ins = _tensors(kwargs, _tensors(args, []))
        versions = [t._version for t in ins]
        keys = [_key(t) for t in ins]
        read = [self._lookup(t) for t in ins]
        in_names = _listed([n.name if n else UNTRACED for n in read])
        name = self._probe(op)
        op = _kernel_op(op, args, kwargs)
        dumping = self.dump is not None and not self.dumped
        # the inputs as the op receives them: an in-place op changes them
        # (copied untraced: a dumping run's records are the others')
        with self._pause():
            live = [t.detach().clone() for t in ins] if self._dump_wanted(name) else ins
        call = _Call(self.step, op, in_names, read, live if dumping else None,
                     args if dumping else None, kwargs if dumping else None)
        # views whose gradient hook an in-place op would take out of the graph
        views = [(t, v, n, t._base, t._base.grad_fn) for t, v, n in zip(ins, versions, read)
                 if n is not None and n.hook is not None and t._base is not None
                 and t._base.grad_fn is not None]
        with self._pause():
            out = func(*args, **kwargs)
            for t, version, node, base, fn in views:
                if t._version != version:
                    self._hook_view(t, node, base, fn)
            outs = _tensors(out, [])
            # an op that writes into a tensor it was given (x[i] = v, out=)
            outs += [t for t, v in zip(ins, versions)
                     if t._version != v and all(t is not o for o in outs)]
            # an output that is an input as it was (x.to(x.dtype), a view of
            # the same geometry) is that tensor, not a new one
            outs = [t for t in outs if _key(t) not in keys]
            for k, t in enumerate(outs):
                probe = name if len(outs) == 1 else f"{name}.{k}"
                bound = None
                if self._dump_wanted(probe) and bound_fn is not None:
                    bound = (lambda: bounds.bound(*bound_fn(*args, **kwargs)))
                elif self._dump_wanted(probe):
                    bound = bounds.forward(op, args, kwargs)
                node = self._record(probe, op, t, in_names, call, live, bound)
                if node is not None:
                    self._hook_gradient(t, node)
        for node in read:
            if node is not None:
                node.readers.append(call)
        return out

    def _name_parameter(self, p, qualname):
        """A module's parameter or buffer, when a module first runs with it:
        `init.<module>.<param>`, the value that enters training (from the op
        that made it, if traced)."""
        self._param_names[id(p)] = qualname
        made_by = self._lookup(p)
        with self._pause():
            node = self._record(f"init.{qualname}", "parameter" if made_by else "source", p,
                                [made_by.name] if made_by else [], None)
        if node is not None:
            self._hook_gradient(p, node)

    # ---- modules ------------------------------------------------------------

    def _module_pre(self, module, inputs):
        if self._paused:
            return
        name = self._module_name(module)
        if self._scope:     # a submodule's call is named within its parent's call
            parent, parent_call, _ = self._scope[-1]
            parent_name = self._module_names[id(parent)]
            if name.startswith(parent_name + "."):
                name = parent_call + name[len(parent_name):]
        call_name = self._count(name)
        qual = self._module_names[id(module)]
        for pname, p in list(module.named_parameters(recurse=False)) + \
                list(module.named_buffers(recurse=False)):
            if p is not None and id(p) not in self._param_names:
                self._name_parameter(p, f"{qual}.{pname}")
        self._scope.append((module, call_name, _tensors(inputs, [])))

    def _module_post(self, module, inputs, output):
        if self._paused or not self._scope or self._scope[-1][0] is not module:
            return
        _, call_name, ins = self._scope.pop()
        outs = _tensors(output, [])
        with self._pause():
            for k, t in enumerate(outs):
                name = f"{call_name}.fwd.out" + (f"{k}" if len(outs) > 1 else "")
                made_by = self._lookup(t)
                if made_by is not None:
                    in_names = [made_by.name]
                else:   # made by nothing traced inside: the module is the op
                    in_names = self._in_names(ins + list(module.parameters(recurse=False)))
                node = self._record(name, type(module).__name__, t, in_names, None,
                                    node=made_by)
                if node is not None and made_by is None:
                    self._hook_gradient(t, node)

    # ---- gradients -------------------------------------------------------------

    def _hook_gradient(self, t, node):
        if not t.requires_grad:
            return
        if t.grad_fn is None:
            self._hook_leaf(t)
            return
        # on the op's backward node, not the tensor: a tensor's hook follows
        # it through later in-place ops, and this node is this version's
        self._hook_node(node, t.grad_fn, t.output_nr, None)

    def _hook_node(self, node, fn, index, view):
        """Records node's gradient when autograd node fn runs: its index-th
        output gradient, through view (a function) when given. The hook
        given last to node is the one in force."""
        token = object()
        node.hook = token

        def hook(grad_inputs, grad_outputs):
            g = grad_outputs[index] if index < len(grad_outputs) else None
            if g is not None and node.hook is token:
                self._gradient(node, g if view is None else view(g))
        fn.register_hook(hook)

    def _hook_view(self, t, node, base, fn):
        """t, a view of base, was written in place: autograd rebased t's
        history on base, and t's own backward node left the graph. t's
        gradient (as it was) is then base's gradient seen through t's view,
        taken where fn, base's backward node as it was, runs."""
        size, stride = tuple(t.shape), t.stride()
        offset = t.storage_offset() - base.storage_offset()
        base_size, base_stride = tuple(base.shape), base.stride()

        def view(g):
            with self._pause():
                if g.stride() != base_stride:
                    g = torch.empty_strided(base_size, base_stride, dtype=g.dtype).copy_(g)
                return g.as_strided(size, stride, g.storage_offset() + offset)
        self._hook_node(node, fn, base.output_nr, view)

    def _hook_leaf(self, t):
        """A leaf (a parameter): one hook for all its versions, recording its
        gradient under the parameter's name."""
        if id(t) in self._leaves_hooked:
            return
        self._leaves_hooked[id(t)] = t

        def hook(g):
            node = self._lookup(t)
            if node is None or self._paused:
                return
            if id(t) not in self._param_grads:     # the step's first: what .grad holds
                self._grad_before[id(t)] = self._accumulator(t)
            name = self._param_names.get(id(t), node.first)
            grad = self._gradient(node, g, name=f"{name}.grad")
            if grad is not None:
                self._param_grads.setdefault(id(t), []).append(grad)
        t.register_hook(hook)

    def _accumulator(self, p):
        """What p.grad holds before a gradient is added to it: None when
        nothing (no .grad, or zeros), else its record's name (UNTRACED if none)."""
        with self._pause():
            if p.grad is None or not bool(p.grad.any()):
                return None
        node = self._nodes.get(_key(p.grad))
        return node.name if node is not None and node.alive() else UNTRACED

    def _gradient(self, node, g, name=None):
        """Records the gradient of node's tensor: made by the backward of the
        calls that read it this step, from their outputs' gradients and their
        inputs. Returns the gradient's node (None: not recordable)."""
        if _active is not self:     # a hook left on a tensor by an earlier trace
            return None
        with self._pause():
            readers = [c for c in node.readers if c.step == self.step]
            inputs = []
            for c in readers:
                for o in c.outputs:
                    inputs += o.grad_names[-1:]
                inputs += c.in_names
            # what the readers' backward used: a superset, never a subset
            inputs = _listed(inputs) or [UNTRACED]
            op = self._backward_op(node, readers)
            name = self._count(name or f"{node.first}.grad")
            bound = self._backward_bound(node, readers)
            made = self._record(name, op, g, inputs, None, self._backward_live(readers), bound)
            node.grad_names.append(name)
            if self.dump is not None:
                node.grad = g
            return made

    @staticmethod
    def _role(node, call):
        """Which tensor input of call node's tensor was."""
        for i, n in enumerate(call.read):
            if n is node:
                return i
        return None

    def _backward_op(self, node, readers):
        if len(readers) != 1:
            return "backward"
        c = readers[0]
        ops, role = BACKWARD_OPS.get(c.op), self._role(node, c)
        if ops and role is not None and role < len(ops) and ops[role]:
            return ops[role]
        return f"{c.op.rstrip('_')}_bwd"

    def _backward_live(self, readers):
        if len(readers) != 1 or readers[0].inputs is None:
            return ()
        c = readers[0]
        dy = [o.grad for o in c.outputs if o.grad is not None]
        return dy + list(c.inputs)

    def _backward_bound(self, node, readers):
        """The bound of node's gradient: its one reader's backward, or the
        sum of every reader's contribution (bounds.accumulated); None when
        a contribution has no bound."""
        if self.dump is None or not readers or any(c.inputs is None for c in readers):
            return None
        parts = []
        for c in readers:
            dy = [o.grad for o in c.outputs if o.grad is not None]
            role = self._role(node, c)
            if len(dy) != 1 or role is None:
                return None
            part = bounds.backward_error(self._backward_op(node, [c]), role, dy[0], c.inputs,
                                         c.args, c.kwargs)
            if part is None:
                return None
            parts.append(part)
        total = bounds.accumulated(parts)
        return lambda: bounds.twice(total()[0])

    # ---- optimisers ---------------------------------------------------------------

    def _wrap_optimizers(self):
        """Every optimiser class's step, those defined later included (an
        optimiser's __init__ wraps its class): the update runs untraced and
        each updated parameter is recorded after it."""
        tracer = self
        self._optimizer_init = init = torch.optim.Optimizer.__init__

        def wrap(cls):
            for c in cls.__mro__:
                if "step" in c.__dict__ and c not in tracer._steps and c is not object:
                    tracer._steps[c] = original = c.__dict__["step"]
                    c.step = _traced_step(original)

        def traced_init(opt, *args, **kwargs):
            init(opt, *args, **kwargs)
            wrap(type(opt))
        torch.optim.Optimizer.__init__ = traced_init
        # zero_grad's profiler scope makes tensors too: none of them is a probe
        self._zero_grad = zero_grad = torch.optim.Optimizer.zero_grad

        def untraced_zero_grad(opt, *args, **kwargs):
            with tracer._pause():
                return zero_grad(opt, *args, **kwargs)
        torch.optim.Optimizer.zero_grad = untraced_zero_grad
        stack = [torch.optim.Optimizer]
        while stack:
            cls = stack.pop()
            wrap(cls)
            stack += cls.__subclasses__()

    def _wrap_indexing(self):
        """Tensor.__getitem__ and __setitem__ as traced ops (getitem,
        setitem): PyTorch 1.13 hands indexing to no TorchFunctionMode."""
        tracer = self
        self._indexing = {}
        for name, op in (("__getitem__", "getitem"), ("__setitem__", "setitem")):
            original = getattr(torch.Tensor, name)
            self._indexing[name] = torch.Tensor.__dict__.get(name)     # None: inherited

            def traced(*args, _original=original, _op=op):
                if tracer._paused or _active is not tracer:
                    return _original(*args)
                return tracer._call(_original, _op, args, {})
            setattr(torch.Tensor, name, traced)

    def _after_step(self, opt):
        opt_name = type(opt).__name__.lower()
        with self._pause():
            for g, group in enumerate(opt.param_groups):
                for i, p in enumerate(group["params"]):
                    if p.grad is None:
                        continue
                    qualname = self._param_names.get(id(p)) or f"group{g}.{i}"
                    grad = self._lookup(p.grad)
                    before = self._param_before.get(id(p), UNTRACED)
                    node = self._record(self._count(f"{opt_name}.{qualname}"),
                                        f"{opt_name}_update", p,
                                        _listed([grad.name if grad else UNTRACED, before]),
                                        None, [p.grad])
                    if node is not None:
                        self._param_names.setdefault(id(p), qualname)
        self._end_step()

    def _before_step(self, opt):
        self._param_before = {}
        for group in opt.param_groups:
            for p in group["params"]:
                node = self._lookup(p)
                if node is not None:
                    self._param_before[id(p)] = node.name

    def _end_step(self):
        self.step += 1
        self._counts = {}
        self._param_grads = {}
        self._grad_before = {}
        # forget what freed tensors were (their memory may be reused)
        self._nodes = {k: n for k, n in self._nodes.items() if n.alive()}
        for n in self._nodes.values():
            n.readers, n.grad_names, n.grad = [], [], None



def _listed(names):
    """Input names for a record: each once, in order, UNTRACED once per
    untraced input; past MAX_INPUTS the rest stand as one untraced input."""
    out = []
    for n in names:
        if n == UNTRACED or n not in out:
            out.append(n)
    if len(out) > MAX_INPUTS:
        out = out[:MAX_INPUTS - 1] + [UNTRACED]
    return out


def _traced_step(step):
    def traced(opt, *args, **kwargs):
        tracer = _active
        if tracer is None or tracer._paused:
            return step(opt, *args, **kwargs)
        tracer._before_step(opt)
        with tracer._pause():
            result = step(opt, *args, **kwargs)
        tracer._after_step(opt)
        return result
    traced.__wrapped__ = step
    # the profiler's wrapper (Optimizer._hook_for_profile) must not wrap this
    # one: its scope makes tensors, which would be traced
    traced.hooked = True
    return traced


def default_build():
    import platform
    return (f"python {platform.python_version()} torch {torch.__version__} "
            f"numpy {np.__version__} threads {torch.get_num_threads()}")


def source(name, tensor):
    """Records `tensor` as source `name` in the tracer in force (none: does
    nothing), so a script traced by `python3 -m samebits_torch run` can name
    its data without depending on being traced."""
    if _active is not None:
        _active.source(name, tensor)
    return tensor


def op(name, bound=None):
    """A function of tensors traced as one op named `name` (what it calls
    inside is not traced). bound(*args, **kwargs), if given, returns
    (terms, magnitude_sum): the op sums `terms` terms per output element
    whose magnitudes sum to magnitude_sum (a tensor shaped like the output),
    for the reordering bound of a dump.

        @samebits_torch.op("my_reduce", bound=lambda x: (x.shape[0], x.abs().sum(0)))
        def my_reduce(x): ...
    """
    def wrap(fn):
        def traced(*args, **kwargs):
            if _active is None or _active._paused:
                return fn(*args, **kwargs)
            return _active._call(fn, name, args, kwargs, bound)
        traced.__wrapped__ = fn
        traced.__name__ = getattr(fn, "__name__", name)
        traced.__doc__ = fn.__doc__
        return traced
    return wrap
