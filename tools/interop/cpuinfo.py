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
