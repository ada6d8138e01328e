"""The CPU this runs on, from /proc/cpuinfo: its model name, its flags and
the widest vector instruction set those flags name. The interop tests and
the census read the machine from here, so each says the same of it."""

import os

ISA_BY_FLAG = (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("avx", "AVX"), ("sse2", "SSE2"))


def _fields():
    """The first processor's "model name" and "flags" (empty when absent)."""
    model, flags = "", ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "model name" and not model:
                model = value.strip()
            elif key == "flags" and not flags:
                flags = value
    return model, set(flags.split())


def cpu_model():
    return _fields()[0] or "unknown CPU"


def cpu_has(flag):
    return flag in _fields()[1]


def machine():
    """{"cpu", "isa", "cores"}: what a census says it ran on."""
    model, flags = _fields()
    isa = next((name for flag, name in ISA_BY_FLAG if flag in flags), "x86-64")
    return {"cpu": model or "unknown CPU", "isa": isa, "cores": os.cpu_count()}


# The values of each library's instruction-set variable, the lowest first,
# with the CPU flags a value's code needs: a value is run only where the
# CPU has all of them (a cap above the CPU is never set).
AVX512 = ("avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd")
ISA_VALUES = {
    # OpenBLAS (DYNAMIC_ARCH): the core whose kernels it loads
    "OPENBLAS_CORETYPE": (("Prescott", ("pni",)),
                          ("Nehalem", ("ssse3", "sse4_1", "sse4_2")),
                          ("Sandybridge", ("avx",)),
                          ("Haswell", ("avx2", "fma")),
                          ("Zen", ("avx2", "fma")),
                          ("SkylakeX", AVX512),
                          ("Cooperlake", AVX512 + ("avx512_bf16",))),
    # oneDNN: the widest instruction set its JIT may emit
    "ONEDNN_MAX_CPU_ISA": (("SSE41", ("sse4_1",)),
                           ("AVX", ("avx",)),
                           ("AVX2", ("avx2", "fma")),
                           ("AVX512_CORE", AVX512)),
    # PyTorch: the ATen kernels' build it dispatches to
    "ATEN_CPU_CAPABILITY": (("default", ()),
                            ("avx2", ("avx2", "fma")),
                            ("avx512", AVX512)),
}


def isa_values(variable):
    """(the values of `variable` this CPU can run, [(value, the flags it
    lacks)] for the others)."""
    flags = _fields()[1]
    runnable, skipped = [], []
    for value, needs in ISA_VALUES[variable]:
        lacks = [f for f in needs if f not in flags]
        if lacks:
            skipped.append((value, lacks))
        else:
            runnable.append(value)
    return runnable, skipped
